import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** /proc/<pid>/stat's fields after the command name (which may hold spaces), from field 3 on. */
export function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User and system CPU seconds of a process so far, all its threads (100 ticks a second). */
export function cpuSecondsOf(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Resolves once the process has used less than `busyShare` of a core over a whole second (a
 * service that has finished its start-up work: a search index loaded, catch-ups done); rejects
 * after `timeoutMs`.
 */
export async function waitUntilIdle(pid: number, timeoutMs = 180_000, busyShare = 0.05): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let before = cpuSecondsOf(pid);
  while (Date.now() < deadline) {
    await sleep(1000);
    const now = cpuSecondsOf(pid);
    if (now - before < busyShare) return;
    before = now;
  }
  throw new Error(`process ${pid} still busy after ${timeoutMs / 1000} s`);
}

/** SIGTERM, and the process's exit (its shutdown hooks, a --cpu-prof profile written), at most 20 s. */
export async function stopGracefully(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // gone already
  }
  for (const until = Date.now() + 20_000; Date.now() < until;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

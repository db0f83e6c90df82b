import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface LivePostmaster {
  readonly pid: number;
  readonly port: number;
  /** Its parent (the process that started it) is gone: it was left behind by a killed run. */
  readonly orphaned: boolean;
}

/**
 * The postmaster running on `dataDir`, from its postmaster.pid (line 1: pid, line 4: port), if that
 * process is alive. This is how a second process (`npm run rebuild` beside the service) finds the
 * cluster and its port, which is chosen afresh at each start.
 */
export function livePostmaster(dataDir: string): LivePostmaster | undefined {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  const parent = parentOf(pid);
  return { pid, port: Number(lines[3]), orphaned: parent === 1 || !isAlive(parent ?? 1) };
}

/** Linux: field 4 of /proc/<pid>/stat. Elsewhere unknown (treated as owned, so it is shared, not killed). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** A run killed with SIGKILL leaves its postmaster behind (a separate process); stop it, keeping its data. */
export async function stopLeftoverPostmaster(dataDir: string, pid: number): Promise<void> {
  process.kill(pid, 'SIGINT'); // "fast" shutdown: aborts open transactions, keeps committed data
  const deadline = Date.now() + 30_000;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(pid)) throw new Error(`stale PostgreSQL (pid ${pid}) on ${dataDir} did not stop`);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, just not ours to signal
  }
}

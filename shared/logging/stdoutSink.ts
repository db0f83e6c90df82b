import { writeSync } from 'node:fs';

/**
 * Collects log lines and writes them with one stdout write per event-loop turn: under load a
 * request log line per request would otherwise be one (synchronous, for pipes) syscall each.
 * Pending lines are written synchronously on process exit so a crash loses nothing buffered.
 */
export function createStdoutSink(
  stream: NodeJS.WriteStream & { fd: number } = process.stdout,
): (line: string) => void {
  let pending: string[] = [];
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.join('\n') + '\n';
    pending = [];
    stream.write(chunk);
  };

  process.once('exit', () => {
    if (pending.length === 0) return;
    try {
      writeSync(stream.fd, pending.join('\n') + '\n');
    } catch {
      // stdout already closed: nothing left to tell.
    }
    pending = [];
  });

  return (line: string) => {
    pending.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

let shared: ((line: string) => void) | undefined;

/** The process-wide stdout sink (one exit hook, one buffer, however many loggers). */
export function stdoutSink(): (line: string) => void {
  shared ??= createStdoutSink();
  return shared;
}

import { SingleBar } from 'cli-progress';
import { formatBytes } from './formatBytes';

/** What a transfer reports as bytes move; a no-op when nothing is drawn. */
export interface TransferProgress {
  start(total: number, done?: number): void;
  advance(bytes: number): void;
  stop(): void;
}

const SPEED_WINDOW_MS = 3000;

/**
 * A progress bar with percent, bytes/s and ETA, drawn on stderr only when it is a terminal: a
 * pipe or a log file gets no escape sequences at all (the caller passes `interactive`).
 */
export function transferProgress(label: string, interactive: boolean): TransferProgress {
  if (!interactive) return { start: () => undefined, advance: () => undefined, stop: () => undefined };
  const bar = new SingleBar({
    format: `${label} [{bar}] {percentage}% | {done}/{size} | {speed} | ETA {eta_formatted}`,
    stream: process.stderr,
    barsize: 24,
    hideCursor: true,
    fps: 8,
    etaBuffer: 50,
  });
  const samples: [number, number][] = [];
  let value = 0;
  let total = 0;
  const payload = () => {
    const now = Date.now();
    samples.push([now, value]);
    while (samples.length > 2 && now - (samples[0]?.[0] ?? now) > SPEED_WINDOW_MS) samples.shift();
    const [t0, v0] = samples[0] ?? [now, value];
    const seconds = (now - t0) / 1000;
    const speed = seconds > 0 ? `${formatBytes((value - v0) / seconds)}/s` : '-- B/s';
    return { done: formatBytes(value), size: formatBytes(total), speed };
  };
  return {
    start(size, done = 0) {
      total = size;
      value = done;
      bar.start(Math.max(size, 1), done, payload());
    },
    advance(bytes) {
      value += bytes;
      bar.update(value, payload());
    },
    stop() {
      bar.update(value, payload());
      bar.stop();
    },
  };
}

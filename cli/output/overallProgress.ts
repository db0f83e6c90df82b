import { SingleBar } from 'cli-progress';
import { formatBytes } from './formatBytes';

/**
 * One progress report for many transfers at once (`bic upload a b c`, `bic import`): files done of
 * all, bytes on the server of all, the rate over the last seconds and the time left. Each file
 * reports its own absolute count (a retry may go back; a resume starts above zero without the
 * resumed bytes counting towards the rate).
 */
export interface OverallProgress {
  /** Adds one file of `size` bytes to the totals (an import may learn its files as it goes; again: no change). */
  add(key: string, size: number): void;
  /** The bytes of `key` the server has so far. */
  update(key: string, bytes: number): void;
  /** `key` is finished: uploaded, or failed (then its bytes leave the totals). */
  finish(key: string, ok: boolean): void;
  stop(): void;
}

export interface OverallProgressOptions {
  /** Draw a bar on stderr (a terminal); else plain lines at most every `plainEveryMs`. */
  readonly interactive: boolean;
  readonly stream?: NodeJS.WritableStream;
  /** A plain line (non-terminal) at most this often, while anything is moving. */
  readonly plainEveryMs?: number;
  /** The first label while one file is known: its name. */
  readonly label?: string;
}

const RATE_WINDOW_MS = 5000;

export function overallProgress(options: OverallProgressOptions): OverallProgress {
  const stream = options.stream ?? process.stderr;
  const sizes = new Map<string, number>();
  const perFile = new Map<string, number>();
  const samples: [number, number][] = [];
  let files = 0;
  let bytes = 0;
  let finished = 0;
  let failed = 0;
  let moved = 0; // bytes sent in this run (rate), never the resumed ones
  let doneBytes = 0; // the sum of perFile, kept as it changes (a sum over all files per call was O(files))
  let lastPlain = Date.now();
  let stopped = false;

  const done = (): number => doneBytes;
  const setDone = (key: string, value: number): void => {
    doneBytes += value - (perFile.get(key) ?? 0);
    perFile.set(key, value);
  };
  const rate = (): number => {
    const now = Date.now();
    samples.push([now, moved]);
    while (samples.length > 2 && now - (samples[0]?.[0] ?? now) > RATE_WINDOW_MS) samples.shift();
    const [t0, m0] = samples[0] ?? [now, moved];
    return now > t0 ? ((moved - m0) * 1000) / (now - t0) : 0;
  };
  const label = (): string =>
    files === 1 && options.label !== undefined ? options.label : `${finished}/${files} files`;
  const payload = () => {
    const speed = rate();
    const left = Math.max(0, bytes - done());
    return {
      label: label(),
      done: formatBytes(done()),
      size: formatBytes(bytes),
      speed: `${formatBytes(speed)}/s`,
      left: speed > 0 ? formatSeconds(left / speed) : left === 0 ? '0s' : '--',
      failed: failed > 0 ? ` | ${failed} failed` : '',
    };
  };

  const bar = options.interactive
    ? new SingleBar({
        format: '{label} [{bar}] {percentage}% | {done}/{size} | {speed} | ETA {left}{failed}',
        stream,
        barsize: 24,
        hideCursor: true,
        fps: 8,
        etaBuffer: 50,
      })
    : undefined;
  let barStarted = false;

  const draw = (force = false): void => {
    if (stopped) return;
    const value = done();
    if (bar) {
      if (!barStarted) {
        bar.start(Math.max(bytes, 1), value, payload());
        barStarted = true;
      } else {
        bar.setTotal(Math.max(bytes, 1));
        bar.update(value, payload());
      }
      return;
    }
    const now = Date.now();
    if (!force && now - lastPlain < (options.plainEveryMs ?? 10_000)) return;
    lastPlain = now;
    const p = payload();
    const percent = bytes > 0 ? Math.floor((value / bytes) * 100) : 100;
    stream.write(
      `bic: ${finished}/${files} files, ${p.done} of ${p.size} (${percent}%), ${p.speed}, ${p.left} left${p.failed}\n`,
    );
  };

  return {
    add(key, size) {
      const known = sizes.get(key);
      if (known === undefined) files++;
      bytes += size - (known ?? 0);
      sizes.set(key, size);
      if (bar) draw();
    },
    update(key, value) {
      const before = perFile.get(key);
      // The first report of a file is where it starts (a resume): not bytes moved in this run.
      if (before !== undefined && value > before) moved += value - before;
      setDone(key, value);
      draw();
    },
    finish(key, ok) {
      finished++;
      if (!ok) {
        failed++;
        bytes -= sizes.get(key) ?? 0;
        doneBytes -= perFile.get(key) ?? 0;
        perFile.delete(key);
      } else setDone(key, sizes.get(key) ?? perFile.get(key) ?? 0);
      draw(!bar && files > 1);
    },
    stop() {
      if (stopped) return;
      if (bar && barStarted) {
        bar.update(done(), payload());
        bar.stop();
      }
      stopped = true;
    },
  };
}

/** 3725 → "1h02m", 125 → "2m05s", 9 → "9s". */
export function formatSeconds(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

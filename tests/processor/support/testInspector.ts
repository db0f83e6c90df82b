import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import type { ByteSource, Inspection } from '#services/processor/inspection';

/**
 * A deterministic inspector for the processor's tests, loaded by the worker thread in place of
 * shared/formats. It reads every byte through the source (as a real reader does) and is steered
 * by the file name:
 * - `slow-<ms>-…`: takes that long first (a crash test kills the processor meanwhile);
 * - `bad-…`: an expected format failure;
 * - `crash-…`: the worker thread exits (code 7), as a crash that may go otherwise next time;
 * - `flaky-…`: the source fails once per file name (a marker in the temp dir), then works;
 * - `hog-…`: allocates until the worker's heap limit ends it;
 * - `preview-…`: returns a preview (small PNG-like bytes);
 * - `…thread-…`: adds the worker thread's id and nice value to the metadata (which worker ran it);
 * - `…runs-…`: appends a line to runsMarker(filename) as each run starts (how often it was inspected).
 * Otherwise: `{format: 'test', bytes, sha256}`.
 */
export const TEST_PREVIEW = Buffer.from('\x89PNG\r\n\x1a\n test preview', 'latin1');

/** Where a `flaky-` file's fault is remembered (the test removes it: see flakyMarker's callers). */
export const flakyMarker = (filename: string): string => path.join(tmpdir(), `processor-test-${filename}`);

/** One line per inspection run of a `runs-` file (the test removes it). */
export const runsMarker = (filename: string): string =>
  path.join(tmpdir(), `processor-test-runs-${filename}`);

export async function inspectUpload(source: ByteSource, filename: string): Promise<Inspection> {
  if (filename.includes('runs-')) appendFileSync(runsMarker(filename), 'run\n');
  const slow = /slow-(\d+)/.exec(filename);
  if (slow) await sleep(Number(slow[1]));
  if (filename.startsWith('flaky-')) {
    const marker = flakyMarker(filename);
    if (!existsSync(marker)) {
      writeFileSync(marker, '1');
      throw new Error('EIO: simulated read fault');
    }
  }
  if (filename.startsWith('crash-')) process.exit(7);
  if (filename.startsWith('hog-')) {
    const hoard: number[][] = [];
    for (;;) hoard.push(new Array<number>(1_000_000).fill(hoard.length));
  }
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of await source.open()) {
    const buffer = chunk as Buffer;
    hash.update(buffer);
    bytes += buffer.length;
  }
  if (filename.startsWith('bad-')) return { ok: false, reason: 'not a test file: its name says bad' };
  return {
    ok: true,
    metadata: {
      format: 'test',
      bytes,
      sha256: hash.digest('hex'),
      ...(filename.includes('thread-') ? { thread: threadId, nice: getPriority() } : {}),
    },
    preview: filename.startsWith('preview-') ? TEST_PREVIEW : null,
  };
}

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Page faults of a child process that mallocs (Buffer.allocUnsafeSlow), fills and frees 200 blocks
 * of 1 MiB, with and without keepFreedHeapMemory first: glibc maps each such block anew (and the
 * kernel faults in and zeroes its 256 pages) until its thresholds are raised, then reuses the heap.
 */
async function faultsOfChurn(
  keep: boolean,
  env: NodeJS.ProcessEnv = {},
): Promise<{ faults: number; kept: boolean }> {
  const script = `(async () => {
    const { readFileSync } = require('node:fs');
    const { keepFreedHeapMemory } = require('#shared/runtime/keepFreedHeapMemory');
    const faults = () => Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[7]);
    const kept = ${keep} ? await keepFreedHeapMemory() : false;
    const before = faults();
    for (let i = 0; i < 200; i++) {
      Buffer.allocUnsafeSlow(1024 * 1024).fill(1);
      if (i % 4 === 3) globalThis.gc();
    }
    process.stdout.write(JSON.stringify({ faults: faults() - before, kept }));
  })();`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', '--eval', script],
    { cwd: ROOT, env: { ...process.env, ...env } },
  );
  return JSON.parse(stdout) as { faults: number; kept: boolean };
}

const linuxGlibc =
  process.platform === 'linux' &&
  typeof (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } }).header
    ?.glibcVersionRuntime === 'string';

(linuxGlibc ? test : test.skip)(
  'freed memory is reused instead of being faulted in again (glibc thresholds raised)',
  async () => {
    // glibc's default threshold (128 KiB), pinned for the baseline: left dynamic, one large block the
    // child freed before the churn (V8's, the loader's) raises it by itself, and the baseline stops
    // faulting (4,023 faults once under the parallel suite).
    const without = await faultsOfChurn(false, { MALLOC_MMAP_THRESHOLD_: '131072' });
    const kept = await faultsOfChurn(true);
    // 200 MiB churned: without, most of its 51,200 pages are faulted in; with, about one block's worth.
    expect(without.faults).toBeGreaterThan(25_000);
    expect(kept.kept).toBe(true);
    expect(kept.faults).toBeLessThan(without.faults / 4);
  },
  60_000,
);

(linuxGlibc ? test : test.skip)(
  "an operator's own malloc thresholds are left as they are",
  async () => {
    const tuned = await faultsOfChurn(true, { GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=131072' });
    expect(tuned.kept).toBe(false);
    const byVariable = await faultsOfChurn(true, { MALLOC_MMAP_THRESHOLD_: '131072' });
    expect(byVariable.kept).toBe(false);
    expect(byVariable.faults).toBeGreaterThan(25_000);
  },
  60_000,
);

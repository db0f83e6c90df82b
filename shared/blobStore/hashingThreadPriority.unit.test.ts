import { readFileSync, readdirSync } from 'node:fs';
import { HASHING_NICE, OffThreadSha256 } from './offThreadSha256';

// Its own file: a fresh module registry, so the hashing thread starts within the test. (Jest keeps
// one worker process for several files, and each file's registry starts a thread of its own.)

/** A thread's nice value (Linux /proc: field 19 of a task's stat). */
function niceOf(task: string): number {
  const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

const linux = process.platform === 'linux' ? test : test.skip;
linux('the hashing thread alone runs at a lower priority; the main thread keeps its own', async () => {
  const mainNice = niceOf(String(process.pid));
  const before = new Set(readdirSync('/proc/self/task'));
  const hash = new OffThreadSha256();
  const batch = hash.batch();
  batch.write('started');
  await hash.update(batch.subarray(0, 7));
  await hash.digest();
  const started = readdirSync('/proc/self/task').filter((task) => !before.has(task));
  expect(started.map(niceOf)).toEqual([Math.max(HASHING_NICE, mainNice)]);
  expect(niceOf(String(process.pid))).toBe(mainNice);
});

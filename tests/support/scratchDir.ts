import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const created: string[] = [];

// Registered when a test file first imports this module (jest gives each file its own module
// registry): the directories that file created are removed once its tests are done.
if (typeof afterAll === 'function')
  afterAll(() => {
    for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

/** A new empty directory under the system's temp dir, removed after the test file's tests. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

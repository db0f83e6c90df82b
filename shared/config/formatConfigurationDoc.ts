import { execFileSync } from 'node:child_process';
import { configurationDoc } from './configurationDoc';

/**
 * The document as committed: generated, then laid out by Prettier with the project's settings. The
 * CLI in a child process, because Prettier's API is ESM-only inside Jest.
 */
export function formatConfigurationDoc(current: string | undefined, filePath: string): string {
  const prettier = require.resolve('prettier/bin/prettier.cjs');
  return execFileSync(process.execPath, [prettier, '--stdin-filepath', filePath], {
    input: configurationDoc(current),
    encoding: 'utf8',
  });
}

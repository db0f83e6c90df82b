import { CommanderError } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CliError, ExitCode } from './exitCodes';
import { createProgram } from './program';

/** The package version, from the package.json above this file (source or compiled layout). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file))
      return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0';
  }
  return '0';
}

/** Runs `bic` with the given arguments; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    await createProgram(packageVersion()).parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    if (error instanceof CliError) {
      process.stderr.write(`bic: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(
      `bic: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return ExitCode.failure;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}

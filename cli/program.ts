import { Command } from 'commander';
import { accountCommands } from './commands/accountCommands';
import { auditCommands } from './commands/auditCommands';
import { brainCommands } from './commands/brainCommands';
import { catalogueCommands } from './commands/catalogueCommands';
import { historyCommands } from './commands/historyCommands';
import { importCommands } from './commands/importCommands';
import { commandRunner } from './commands/runCommand';
import { tokenCommands } from './commands/tokenCommands';
import { uploadCommands } from './commands/uploadCommands';
import { DEFAULT_SERVER } from './context';

const EXIT_CODES_HELP = `
Server: --server, else $BIC_SERVER, else the one stored at login, else ${DEFAULT_SERVER}.
Token: $BIC_TOKEN, else the one stored at login ($BIC_CONFIG_DIR, else $XDG_CONFIG_HOME/bic, else ~/.config/bic).

Exit codes: 0 ok, 1 other failure, 2 usage, 3 not authenticated (401, refused login, not logged in),
4 forbidden (403), 5 not found (404), 6 invalid request (400, 409, 413, 415, 422),
7 server error or unreachable (5xx, network), 8 rate limited (429 after retries),
9 upload processing failed, 10 download checksum mismatch, 130 interrupted (Ctrl-C; run it again to resume).`;

/** The `bic` command tree. */
export function createProgram(version: string): Command {
  const program = new Command('bic')
    .description('command-line client of the brain imaging catalogue')
    .version(version)
    .option('--server <url>', 'the catalogue server')
    .addHelpText('after', EXIT_CODES_HELP)
    .showHelpAfterError('(run with --help for usage)')
    // commander throws instead of exiting (subcommands inherit this): main.ts picks the exit code.
    .exitOverride();
  const run = commandRunner(program, version);
  accountCommands(program, run);
  tokenCommands(program, run);
  catalogueCommands(program, run);
  brainCommands(program, run);
  uploadCommands(program, run);
  importCommands(program, run);
  historyCommands(program, run);
  auditCommands(program, run);
  return program;
}

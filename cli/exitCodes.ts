/**
 * The exit codes of `bic`, one per kind of failure so scripts can tell them apart (docs/cli.md).
 */
export const ExitCode = {
  ok: 0,
  /** Anything not listed below (a local file that cannot be read, an unexpected answer). */
  failure: 1,
  /** Bad command line: unknown command or option, a missing argument, no terminal for a prompt. */
  usage: 2,
  /** 401, a refused login, or no stored token: log in (again). */
  unauthenticated: 3,
  /** 403: authenticated, but not allowed. */
  forbidden: 4,
  /** 404: no such record. */
  notFound: 5,
  /** 400 and other refusals of the request itself (409, 413, 415, 422). */
  invalid: 6,
  /** 5xx, or the server could not be reached. */
  unavailable: 7,
  /** 429 that outlasted the bounded waits. */
  rateLimited: 8,
  /** An upload whose processing ended in `failed` (upload --wait, brains create --wait). */
  processingFailed: 9,
  /** A download whose bytes do not match the SHA-256 the server announced. */
  integrity: 10,
  /** Stopped by Ctrl-C (128 + SIGINT, as shells report it): the same command again resumes. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure with the one line the user sees and the exit code it ends with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

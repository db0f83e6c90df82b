import type { CliContext } from '#cli/context';

/** --json output: the server's JSON, pretty-printed, alone on stdout. */
export const printJson = (ctx: CliContext, value: unknown): void => ctx.print(JSON.stringify(value, null, 2));

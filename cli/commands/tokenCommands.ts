import type { Command } from 'commander';
import type { AccessToken, CreatedAccessToken } from '#cli/api/resources';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { printJson } from '#cli/output/printJson';
import { renderTable } from '#cli/output/table';
import type { RunCommand } from './runCommand';

export function tokenCommands(program: Command, run: RunCommand): void {
  const tokens = program.command('tokens').description('your personal access tokens');

  tokens
    .command('list')
    .description('list your active tokens (* marks the stored one)')
    .option('--json', 'print the JSON')
    .action(run(listTokens));

  tokens
    .command('create')
    .description('create a token; its value is printed once and never again')
    .argument('<name>', 'what the token is for (1–100 characters)')
    .option('--expires-at <datetime>', 'ISO 8601 time after which the token is invalid')
    .option('--json', 'print the JSON')
    .action(run(createToken));

  tokens
    .command('revoke')
    .description('revoke a token by its id')
    .argument('<id>', 'the token id (see `bic tokens list`)')
    .action(run(revokeToken));
}

async function listTokens(ctx: CliContext, opts: { json?: boolean }): Promise<void> {
  requireToken(ctx);
  const list = await ctx.api.json<AccessToken[]>({ method: 'GET', path: '/api/tokens/' });
  if (opts.json) return printJson(ctx, list);
  const current = ctx.config.token_id;
  ctx.print(
    renderTable(list, [
      { header: '', value: (t) => (t.id === current ? '*' : '') },
      { header: 'id', value: (t) => t.id },
      { header: 'name', value: (t) => t.name },
      { header: 'created', value: (t) => t.created_at },
      { header: 'last used', value: (t) => t.last_used_at },
      { header: 'expires', value: (t) => t.expires_at ?? 'never' },
    ]),
  );
}

async function createToken(ctx: CliContext, opts: { expiresAt?: string; json?: boolean }, name = '') {
  requireToken(ctx);
  if (opts.expiresAt !== undefined && Number.isNaN(Date.parse(opts.expiresAt)))
    throw new CliError(`--expires-at: not an ISO 8601 time: ${opts.expiresAt}`, ExitCode.usage);
  const created = await ctx.api.json<CreatedAccessToken>({
    method: 'POST',
    path: '/api/tokens/',
    json: { name, ...(opts.expiresAt === undefined ? {} : { expires_at: opts.expiresAt }) },
  });
  if (opts.json) return printJson(ctx, created);
  ctx.notice(`created token "${created.name}" (id ${created.id}); its value, shown only now:`);
  ctx.print(created.token);
}

async function revokeToken(ctx: CliContext, _opts: unknown, id = ''): Promise<void> {
  requireToken(ctx);
  await ctx.api.send({ method: 'DELETE', path: `/api/tokens/${encodeURIComponent(id)}/` });
  if (id === ctx.config.token_id) {
    await ctx.store.write({ server: ctx.config.server });
    ctx.print(`Revoked token ${id}; it was the stored one, so you are now logged out`);
  } else ctx.print(`Revoked token ${id}`);
}

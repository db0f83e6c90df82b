import type { Command } from 'commander';
import type { Json, Page } from '#cli/api/resources';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { printJson } from '#cli/output/printJson';
import { renderTable } from '#cli/output/table';
import type { RunCommand } from './runCommand';
import { embargoDate, roleName, visibilityName } from './visibilityOptions';

/** One collaborator as `GET /api/brains/{key}/collaborators/` lists them. */
export interface Collaborator {
  readonly user: { readonly id: number; readonly username: string; readonly email?: string };
  readonly role: string;
  readonly added_at: string;
}

const brainPath = (key: string): string => `/api/brains/${encodeURIComponent(key)}/`;
const collaboratorsPath = (key: string): string => `${brainPath(key)}collaborators/`;

/** `bic brains share|unshare|collaborators|visibility`: who may see a brain (decisions.md). */
export function shareCommands(brains: Command, run: RunCommand): void {
  brains
    .command('share')
    .description('let a user see a private or embargoed brain (viewer), or also change it (editor)')
    .argument('<key>', 'numeric id or readable id of the brain')
    .argument('<user>', 'username or e-mail of the user')
    .requiredOption('--role <role>', 'viewer (read and download) or editor (also change)', roleName)
    .option('--json', 'print the JSON')
    .action(run(share));

  brains
    .command('unshare')
    .description('take a collaborator off a brain')
    .argument('<key>', 'numeric id or readable id of the brain')
    .argument('<user>', 'username, e-mail or user id of the collaborator')
    .action(run(unshare));

  brains
    .command('collaborators')
    .description("a brain's collaborators and their roles")
    .argument('<key>', 'numeric id or readable id of the brain')
    .option('--json', 'print the JSON')
    .action(run(listCollaborators));

  brains
    .command('visibility')
    .description('make a brain public, private, or embargoed until a date (uploader or staff)')
    .argument('<key>', 'numeric id or readable id of the brain')
    .argument('<visibility>', 'public, private or embargoed', visibilityName)
    .option(
      '--until <date>',
      'end of the embargo: YYYY-MM-DD (midnight UTC) or an ISO 8601 time',
      embargoDate,
    )
    .option('--json', 'print the JSON')
    .action(run(changeVisibility));
}

async function share(
  ctx: CliContext,
  opts: { role: string; json?: boolean },
  key = '',
  user = '',
): Promise<void> {
  requireToken(ctx);
  const response = await ctx.api.send({
    method: 'POST',
    path: collaboratorsPath(key),
    json: { user, role: opts.role },
  });
  const added = (await response.json()) as Collaborator;
  if (opts.json) return printJson(ctx, added);
  const verb = response.status === 201 ? 'shared with' : 'role changed for';
  ctx.print(`Brain ${key}: ${verb} ${added.user.username} (user ${added.user.id}) as ${added.role}`);
}

async function unshare(ctx: CliContext, _opts: unknown, key = '', user = ''): Promise<void> {
  requireToken(ctx);
  const collaborator = await findCollaborator(ctx, key, user);
  await ctx.api.send({ method: 'DELETE', path: `${collaboratorsPath(key)}${collaborator.id}/` });
  ctx.print(`Brain ${key}: no longer shared with ${collaborator.name}`);
}

/**
 * The user id the DELETE route takes, from what the user typed: a collaborator's id, username or
 * e-mail (when the list shows it). A number no collaborator is named goes to the server as an id,
 * which answers 404 if it is not one either.
 */
async function findCollaborator(
  ctx: CliContext,
  key: string,
  user: string,
): Promise<{ id: number; name: string }> {
  const collaborators = await fetchCollaborators(ctx, key);
  const wanted = user.trim().toLowerCase();
  const match =
    collaborators.find((c) => String(c.user.id) === wanted) ??
    collaborators.find((c) => c.user.username.toLowerCase() === wanted) ??
    collaborators.find((c) => c.user.email?.toLowerCase() === wanted);
  if (match) return { id: match.user.id, name: match.user.username };
  if (/^[1-9]\d{0,9}$/.test(wanted)) return { id: Number(wanted), name: `user ${wanted}` };
  const hint =
    wanted.includes('@') && !collaborators.some((c) => c.user.email)
      ? ' (the list shows no e-mail addresses: give the username or user id, see `bic brains collaborators`)'
      : '';
  throw new CliError(`not found: ${user} is not a collaborator of brain ${key}${hint}`, ExitCode.notFound);
}

async function fetchCollaborators(ctx: CliContext, key: string): Promise<Collaborator[]> {
  const body = await ctx.api.json<Collaborator[] | Page<Collaborator>>({
    method: 'GET',
    path: collaboratorsPath(key),
  });
  return Array.isArray(body) ? body : body.results;
}

async function listCollaborators(ctx: CliContext, opts: { json?: boolean }, key = ''): Promise<void> {
  const collaborators = await fetchCollaborators(ctx, key);
  if (opts.json) return printJson(ctx, collaborators);
  if (collaborators.length === 0) return ctx.print(`(brain ${key} has no collaborators)`);
  ctx.print(
    renderTable(collaborators, [
      { header: 'user id', value: (c) => c.user.id },
      { header: 'username', value: (c) => c.user.username },
      { header: 'role', value: (c) => c.role },
      { header: 'added', value: (c) => c.added_at },
    ]),
  );
}

async function changeVisibility(
  ctx: CliContext,
  opts: { until?: string; json?: boolean },
  key = '',
  visibility = '',
): Promise<void> {
  requireToken(ctx);
  if (visibility === 'embargoed' && opts.until === undefined)
    throw new CliError('embargoed needs --until <date>', ExitCode.usage);
  if (visibility !== 'embargoed' && opts.until !== undefined)
    throw new CliError('--until goes with embargoed only', ExitCode.usage);
  const brain = await ctx.api.json<Json>({
    method: 'PATCH',
    path: brainPath(key),
    json: visibility === 'embargoed' ? { visibility, embargo_until: opts.until } : { visibility },
  });
  if (opts.json) return printJson(ctx, brain);
  ctx.print(`Brain ${String(brain.id)} (${String(brain.readable_id)}) is ${describe(brain)}`);
}

/** "private", "embargoed until 2027-01-31T00:00:00.000Z", "public". */
export const describe = (brain: Json): string =>
  brain.visibility === 'embargoed' && typeof brain.embargo_until === 'string'
    ? `embargoed until ${brain.embargo_until}`
    : String(brain.visibility);

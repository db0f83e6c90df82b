import type { Command } from 'commander';
import { hostname } from 'node:os';
import { errorForResponse } from '#cli/api/errorForResponse';
import type { CreatedAccessToken, CurrentUser, LoginReply } from '#cli/api/resources';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { printJson } from '#cli/output/printJson';
import { prompt, readStdin } from '#cli/output/prompt';
import type { RunCommand } from './runCommand';

interface LoginOptions {
  email?: string;
  passwordStdin?: boolean;
  token?: string;
  tokenName?: string;
}

export function accountCommands(program: Command, run: RunCommand): void {
  program
    .command('login')
    .description('log in and store a personal access token named after this machine (mode 0600)')
    .option('--email <email>', 'the account email (asked when omitted)')
    .option('--password-stdin', 'read the password from standard input (for scripts)')
    .option('--token <token>', 'store this existing personal access token instead (checked first)')
    .option('--token-name <name>', 'name of the created token', defaultTokenName())
    .action(run((ctx, opts: LoginOptions) => (opts.token ? storeToken(ctx, opts.token) : login(ctx, opts))));

  program
    .command('register')
    .description('create an account on the server (the password is asked twice, never echoed)')
    .option('--email <email>', 'the account email (asked when omitted)')
    .option('--username <name>', 'the user name (asked when omitted)')
    .option('--first-name <name>', 'first name (asked when omitted)')
    .option('--last-name <name>', 'last name (asked when omitted)')
    .option('--password-stdin', 'read the password from standard input (for scripts)')
    .option('--login', 'log in right after, storing a token as `bic login` does')
    .option('--token-name <name>', 'name of the token created with --login', defaultTokenName())
    .option('--json', 'print the JSON of the new account')
    .action(run(register));

  program
    .command('logout')
    .description('revoke the stored token on the server and forget it')
    .action(run(logout));

  program
    .command('whoami')
    .description('show the account of the stored token')
    .option('--json', 'print the JSON')
    .action(
      run(async (ctx, opts: { json?: boolean }) => {
        requireToken(ctx);
        const me = await ctx.api.json<CurrentUser>({ method: 'GET', path: '/api/auth/me/' });
        if (opts.json) printJson(ctx, me);
        else ctx.print(`${me.username} <${me.email}> (user ${me.id}) on ${ctx.server}`);
      }),
    );
}

/** The machine's name, as the token's name: `bic on <hostname>` (1–100 characters). */
const defaultTokenName = (): string => `bic on ${hostname() || 'unknown host'}`.slice(0, 100);

interface RegisterOptions {
  email?: string;
  username?: string;
  firstName?: string;
  lastName?: string;
  passwordStdin?: boolean;
  login?: boolean;
  tokenName?: string;
  json?: boolean;
}

async function register(ctx: CliContext, opts: RegisterOptions): Promise<void> {
  const instead = 'pass --email, --username, --first-name, --last-name and --password-stdin';
  const email = opts.email ?? (await prompt('Email: ', { instead }));
  const username = opts.username ?? (await prompt('Username: ', { instead }));
  const firstName = opts.firstName ?? (await prompt('First name: ', { instead }));
  const lastName = opts.lastName ?? (await prompt('Last name: ', { instead }));
  let password: string;
  if (opts.passwordStdin) password = await readStdin();
  else {
    password = await prompt('Password (8 characters at least): ', { hidden: true, instead });
    if ((await prompt('Password again: ', { hidden: true, instead })) !== password)
      throw new CliError('the two passwords differ: nothing was sent', ExitCode.usage);
  }
  const user = await ctx.api.json<CurrentUser>({
    method: 'POST',
    path: '/api/auth/register/',
    json: {
      email,
      username,
      password,
      password_confirm: password,
      first_name: firstName,
      last_name: lastName,
    },
    token: null,
  });
  if (opts.json) printJson(ctx, user);
  else ctx.print(`Registered ${user.username} <${user.email}> (user ${user.id}) on ${ctx.server}`);
  if (opts.login) await loginWith(ctx, email, password, opts.tokenName);
  else if (!opts.json) ctx.print('Log in with `bic login`');
}

async function login(ctx: CliContext, opts: LoginOptions): Promise<void> {
  const email = opts.email ?? (await prompt('Email: '));
  const password = opts.passwordStdin ? await readStdin() : await prompt('Password: ', { hidden: true });
  await loginWith(ctx, email, password, opts.tokenName);
}

async function loginWith(
  ctx: CliContext,
  email: string,
  password: string,
  tokenName: string | undefined,
): Promise<void> {
  const response = await ctx.api.send({
    method: 'POST',
    path: '/api/auth/login/',
    json: { email, password },
    token: null,
    accept: [400],
  });
  if (response.status === 400) {
    const refused = errorForResponse(400, await response.json().catch(() => ({})));
    throw new CliError(
      `login failed: ${refused.message.replace(/^invalid request \(400\): /, '')}`,
      ExitCode.unauthenticated,
    );
  }
  const session = (await response.json()) as LoginReply;
  try {
    const created = await ctx.api.json<CreatedAccessToken>({
      method: 'POST',
      path: '/api/tokens/',
      json: { name: tokenName ?? defaultTokenName() },
      token: session.token,
    });
    await replaceStoredToken(ctx, created);
    ctx.print(
      `Logged in to ${ctx.server} as ${session.user.username}; token "${created.name}" stored in ${ctx.store.file}`,
    );
  } finally {
    // The login token was only the way to make the personal access token: end it.
    await ctx.api
      .send({ method: 'POST', path: '/api/auth/logout/', token: session.token })
      .catch(() => undefined);
  }
}

async function storeToken(ctx: CliContext, token: string): Promise<void> {
  const me = await ctx.api.json<CurrentUser>({ method: 'GET', path: '/api/auth/me/', token });
  await replaceStoredToken(ctx, { token });
  ctx.print(`Logged in to ${ctx.server} as ${me.username}; token stored in ${ctx.store.file}`);
}

/** Stores the new token; the one it replaces (same server) is revoked so no forgotten token stays valid. */
async function replaceStoredToken(ctx: CliContext, next: { token: string; id?: string; name?: string }) {
  const previous = ctx.config.server === ctx.server ? ctx.config : {};
  await ctx.store.write({ server: ctx.server, token: next.token, token_id: next.id, token_name: next.name });
  if (previous.token && previous.token !== next.token)
    await revoke(ctx, previous.token, previous.token_id).catch(() =>
      ctx.notice('could not revoke the previously stored token; see `bic tokens list`'),
    );
}

async function logout(ctx: CliContext): Promise<void> {
  const { token, token_id: tokenId, server } = ctx.config;
  if (!token || server !== ctx.server) {
    ctx.print(`Not logged in to ${ctx.server}`);
    return;
  }
  try {
    await revoke(ctx, token, tokenId);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    if (error.exitCode !== ExitCode.unauthenticated)
      throw new CliError(`${error.message} (the token is kept: run logout again)`, error.exitCode);
    ctx.notice('the server no longer accepted the token (already revoked or expired)');
  }
  await ctx.store.write({ server });
  ctx.print(`Logged out of ${ctx.server}; the token is revoked and forgotten`);
}

/** Revokes by id when bic made the token (DELETE /api/tokens/{id}/), else the token used (logout). */
function revoke(ctx: CliContext, token: string, id: string | undefined) {
  return id
    ? ctx.api.send({ method: 'DELETE', path: `/api/tokens/${encodeURIComponent(id)}/`, token })
    : ctx.api.send({ method: 'POST', path: '/api/auth/logout/', token });
}

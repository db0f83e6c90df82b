import { ApiClient } from './api/apiClient';
import { ConfigStore, configDir, type StoredConfig } from './config/configStore';
import { CliError, ExitCode } from './exitCodes';

/** Where the service is when nothing says otherwise: what `npm start` serves. */
export const DEFAULT_SERVER = 'http://localhost:8000';

export interface GlobalOptions {
  readonly server?: string;
}

/** What a command runs with: its streams, the config store and a client for the resolved server. */
export interface CliContext {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  readonly env: NodeJS.ProcessEnv;
  readonly store: ConfigStore;
  readonly config: StoredConfig;
  /** The server of this run: --server, else BIC_SERVER, else the stored one, else DEFAULT_SERVER. */
  readonly server: string;
  readonly api: ApiClient;
  /** True when progress bars may be drawn (stderr is a terminal). */
  readonly interactive: boolean;
  print(line?: string): void;
  notice(line: string): void;
}

export async function createContext(options: GlobalOptions, version: string): Promise<CliContext> {
  const env = process.env;
  const store = new ConfigStore(configDir(env));
  const config = await store.read();
  const server = normaliseServer(options.server ?? env.BIC_SERVER ?? config.server ?? DEFAULT_SERVER);
  // A stored token belongs to the server it was made on: never send it anywhere else.
  const storedToken =
    config.token && normaliseServer(config.server ?? '') === server ? config.token : undefined;
  const notice = (line: string): void => void process.stderr.write(`bic: ${line}\n`);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env,
    store,
    config,
    server,
    api: new ApiClient({
      server,
      token: env.BIC_TOKEN || storedToken,
      notice,
      userAgent: `bic/${version} node/${process.versions.node}`,
    }),
    interactive: process.stderr.isTTY === true,
    print: (line = '') => void process.stdout.write(`${line}\n`),
    notice,
  };
}

export function normaliseServer(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CliError(`not a server URL: ${raw}`, ExitCode.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`not an http(s) server URL: ${raw}`, ExitCode.usage);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Fails with the "log in first" line when the run has no token. */
export function requireToken(ctx: CliContext): void {
  if (!ctx.api.hasToken)
    throw new CliError(`not logged in to ${ctx.server} (run \`bic login\`)`, ExitCode.unauthenticated);
}

import { type Client, newUser } from '#tests/support/httpClient';
import { startCuratedService } from '#tests/support/curatedService';
import type { TestService } from '#tests/support/testService';
import { createTaxonomy, type Taxonomy } from '#tests/e2e/brains/brainFixtures';
import { freePort } from '#tests/support/freePort';
import { type ServiceProcess, spawnService } from '#tests/support/spawnService';
import { cliEnv, freshConfigDir, runCli } from './runCli';

export interface CliWorld {
  readonly service: TestService;
  /** The upload processor, as its own process on the service's database and blobs (see startCliWorld). */
  readonly processor?: ServiceProcess;
  readonly api: Client;
  /** The staff login token (for setting up the catalogue over HTTP). */
  readonly staffToken: string;
  readonly taxonomy: Taxonomy;
}

/**
 * The all-in-one with a staff account and one category → species → atlas; with `processor`, also
 * the upload processor (services/processor, as `npm run start:processor` runs it) on the same
 * database and data directory, so uploads go through to completed or failed.
 */
export async function startCliWorld(
  env: Record<string, string> = {},
  options: { processor?: boolean } = {},
): Promise<CliWorld> {
  const { service, api, staff: staffToken } = await startCuratedService(env);
  const taxonomy = await createTaxonomy(api, staffToken);
  const processor = options.processor
    ? await spawnService('services/processor/main.ts', {
        DATABASE_URL: service.databaseUrl,
        DATA_DIR: service.dataDir,
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      }).catch(async (error: unknown) => {
        await service.close();
        throw error;
      })
    : undefined;
  return { service, api, staffToken, taxonomy, processor };
}

export async function stopCliWorld(world: CliWorld | undefined): Promise<void> {
  await world?.processor?.kill();
  await world?.service.close();
}

export interface CliUser {
  readonly email: string;
  readonly password: string;
  readonly id: number;
  readonly username: string;
  readonly configDir: string;
  /** The environment of this user's CLI runs. */
  readonly env: Record<string, string>;
}

/** A registered user with an empty config dir, logged in through `bic login --password-stdin`. */
export async function loggedInUser(world: CliWorld, server = world.service.url): Promise<CliUser> {
  const user = await newUser(world.api);
  const configDir = freshConfigDir();
  const env = cliEnv(server, configDir);
  const login = await runCli(['login', '--email', user.email, '--password-stdin'], env, {
    input: user.password,
  });
  if (login.code !== 0) throw new Error(`bic login: ${login.code} ${login.stderr}`);
  return { ...user, configDir, env };
}

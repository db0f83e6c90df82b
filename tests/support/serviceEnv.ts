import { freePort } from './freePort';
import { createTestDatabase } from './testPostgres';

/** Generous limits so functional tests are not throttled; rate-limit tests pass their own. */
const RELAXED_LIMITS = {
  RATE_LIMIT_LOGIN: '100000/minute',
  RATE_LIMIT_REGISTER: '100000/hour',
  RATE_LIMIT_TOKEN_CREATE: '100000/hour',
  RATE_LIMIT_UPLOAD: '100000/hour',
  RATE_LIMIT_DEFAULT: '1000000/minute',
};

/**
 * What every test's all-in-one runs with: its database and data directory, loopback only, cheap
 * password hashes, warnings and errors only, relaxed rate limits. `env` adds to it or overrides it.
 */
export function serviceEnv(
  databaseUrl: string,
  dataDir: string,
  port: string,
  env: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: port,
    PASSWORD_HASH_LOG_N: '10',
    LOG_LEVEL: 'warn',
    ...RELAXED_LIMITS,
    ...env,
  };
}

/**
 * The environment of an all-in-one run as a child process (spawnAllInOne): a fresh database of the
 * run's PostgreSQL (it outlives every kill, as a real database server would) and a free port.
 */
export async function spawnedServiceEnv(
  databaseName: string,
  dataDir: string,
  env: Readonly<Record<string, string>> = {},
): Promise<Record<string, string>> {
  return serviceEnv(await createTestDatabase(databaseName), dataDir, String(await freePort()), env);
}

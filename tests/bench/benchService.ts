import { loadConfig } from '#shared/config/config';
import { createLogger } from '#shared/logging/logger';
import { startAllInOne, type RunningService } from '#services/all-in-one/startAllInOne';
import path from 'node:path';
import { freePort } from '#tests/support/freePort';
import { type ServiceProcess, spawnService } from '#tests/support/spawnService';

/** Raised far above what a benchmark sends, so the limits are counted but never refuse. */
const NO_LIMITS = {
  RATE_LIMIT_DEFAULT: '1000000000/minute',
  RATE_LIMIT_REGISTER: '1000000000/hour',
  RATE_LIMIT_LOGIN: '1000000000/minute',
  RATE_LIMIT_TOKEN_CREATE: '1000000000/hour',
  RATE_LIMIT_UPLOAD: '1000000000/hour',
};

/**
 * The real all-in-one, in this process, on the benchmark's PostgreSQL. `listCache: false` turns
 * off the brains list's answer cache (LIST_CACHE_MB=0), to measure the queries behind it. Its upload processor runs
 * only where the section measures it: elsewhere it would work through the generated uploads (whose
 * bytes were never stored) while the section measures something else.
 */
export async function startBenchService(
  databaseUrl: string,
  dataDir: string,
  {
    processor = false,
    listCache = true,
  }: { readonly processor?: boolean; readonly listCache?: boolean } = {},
): Promise<RunningService> {
  const config = loadConfig({
    PROCESSOR_ENABLED: String(processor),
    ...(listCache ? {} : { LIST_CACHE_MB: '0' }),
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    PASSWORD_HASH_LOG_N: '10',
    LOG_LEVEL: 'silent',
    ...NO_LIMITS,
  });
  const service = await startAllInOne(config, createLogger({ service: 'bench', level: 'silent' }));
  // Measured warm: the query side's search index loaded into memory (searches would otherwise go to
  // PostgreSQL, and the load take a core, during the first rounds).
  await service.searchLoaded();
  return service;
}

async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Registers and logs in one account; returns its login token and its GET /api/auth/me/ body. */
export async function benchAccount(baseUrl: string): Promise<{ token: string; me: unknown }> {
  const password = 'bench-password-1';
  const account = { email: 'bench@example.org', username: 'bench', first_name: 'Bench', last_name: 'Mark' };
  await post(`${baseUrl}/api/auth/register/`, { ...account, password, password_confirm: password });
  const { token } = (await post(`${baseUrl}/api/auth/login/`, { email: account.email, password })) as {
    token: string;
  };
  const response = await fetch(`${baseUrl}/api/auth/me/`, { headers: { authorization: `Token ${token}` } });
  if (!response.ok) throw new Error(`GET /api/auth/me/: ${response.status}`);
  return { token, me: await response.json() };
}

/** The staff account a spawned all-in-one starts with (spawnBenchService). */
export const BENCH_STAFF = { email: 'curator@example.org', password: 'bench-curator-1', username: 'curator' };

/**
 * The real all-in-one in a child process of its own (its CPU apart from the bench's clients), on
 * the benchmark's PostgreSQL, with BENCH_STAFF as its admin and no rate limit that could refuse.
 * `nodeOptions`: NODE_OPTIONS for it (e.g. a profiler; it ends with SIGTERM, so a profile is written);
 * `env`: more settings (e.g. PROCESSOR_ENABLED); `admin: false` for a store that has its staff
 * account already, written as a generated catalogue (no id allocations for a new account to follow).
 */
export function spawnBenchService(
  databaseUrl: string,
  dataDir: string,
  nodeOptions: string | undefined,
  {
    env = {},
    admin = true,
  }: { readonly env?: Readonly<Record<string, string>>; readonly admin?: boolean } = {},
): Promise<ServiceProcess> {
  return freePort().then((port) =>
    spawnService(
      `services/all-in-one/main${path.extname(__filename)}`,
      {
        DATABASE_URL: databaseUrl,
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        PASSWORD_HASH_LOG_N: '10',
        ...(admin
          ? {
              ADMIN_EMAIL: BENCH_STAFF.email,
              ADMIN_PASSWORD: BENCH_STAFF.password,
              ADMIN_USERNAME: BENCH_STAFF.username,
            }
          : {}),
        ...NO_LIMITS,
        ...env,
        ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
      },
      120_000, // a busy machine may take long to start it
    ),
  );
}

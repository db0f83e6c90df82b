import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '#shared/config/config';
import { createLogger } from '#shared/logging/logger';
import { startAllInOne } from '#services/all-in-one/startAllInOne';
import { type Client, client } from './httpClient';
import { serviceEnv } from './serviceEnv';
import { createTestDatabase } from './testPostgres';

export interface TestService {
  readonly url: string;
  readonly databaseUrl: string;
  readonly dataDir: string;
  close(): Promise<void>;
}

/**
 * The real all-in-one, in this process, on a fresh database of the run's PostgreSQL and a fresh
 * data directory, listening on an ephemeral port. Tests talk to it over HTTP only. Pass another
 * instance's databaseUrl to run several instances of the service on one database.
 */
export async function startTestService(
  env: Record<string, string> = {},
  shareDatabase?: string,
  options: { clock?: () => Date } = {},
): Promise<TestService> {
  const databaseUrl = shareDatabase ?? (await createTestDatabase('e2e'));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-e2e-'));
  const config = loadConfig(serviceEnv(databaseUrl, dataDir, '0', { LOG_LEVEL: 'silent', ...env }));
  const service = await startAllInOne(config, errorsToStderr(), options);
  return {
    url: service.url,
    databaseUrl,
    dataDir,
    async close() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface FileTestService {
  /** Talks to the service, once it has started. */
  readonly api: Client;
  /** The running service; throws before the file's beforeAll has started it. */
  readonly service: () => TestService;
}

/** A test service for all the tests of a file: started before them (beforeAll), closed after them. */
export function testServiceForFile(env: Record<string, string> = {}): FileTestService {
  let running: TestService | undefined;
  const service = (): TestService => {
    if (!running) throw new Error('the test service has not started yet: use it in a test or a hook');
    return running;
  };
  beforeAll(async () => {
    running = await startTestService(env);
  });
  afterAll(() => running?.close());
  return { api: client(() => service().url), service };
}

/**
 * Errors only, on stderr: what went wrong where a test does not look (a shutdown step that hangs, an
 * unexpected 500), next to the failure it explains. Tests that inject faults print a few on purpose.
 */
function errorsToStderr() {
  return createLogger({ service: 'e2e', level: 'error', sink: (line) => process.stderr.write(`${line}\n`) });
}

import pg from 'pg';
import type { SupervisorLogger } from './postmasterSupervisor';

/** What versions before the generated password used for the embedded cluster's superuser. */
export const LEGACY_SUPERUSER_PASSWORD = 'postgres';

export interface SuperuserAccess {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly logger?: SupervisorLogger;
}

export function loopbackUrl(port: number, user: string, password: string, database: string): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/**
 * Connects to the `postgres` database as the superuser. A cluster made by an older version still
 * has the well-known password: it is let in once more, and its password is rotated to ours, so
 * from now on only the holder of the credentials file gets in.
 */
export async function connectAsSuperuser(access: SuperuserAccess): Promise<pg.Client> {
  try {
    return await connect(access, access.password);
  } catch (error) {
    if (!isWrongPassword(error) || access.password === LEGACY_SUPERUSER_PASSWORD) throw error;
    const client = await connect(access, LEGACY_SUPERUSER_PASSWORD).catch(() => {
      throw error; // neither ours nor the old default: report the first refusal
    });
    await client.query(
      `ALTER ROLE ${client.escapeIdentifier(access.user)} PASSWORD ${client.escapeLiteral(access.password)}`,
    );
    access.logger?.info(
      'embedded PostgreSQL: replaced the old default superuser password with a generated one',
    );
    return client;
  }
}

/**
 * Ensures each role exists as a plain login role (no superuser, no role or database creation) with
 * the given password. Idempotent: run at every start, so the server always matches the file.
 */
export async function ensureLoginRoles(
  client: pg.Client,
  passwords: Readonly<Record<string, string>>,
): Promise<void> {
  for (const [role, password] of Object.entries(passwords)) {
    const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${client.escapeLiteral(password)}`;
    const name = client.escapeIdentifier(role);
    const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
    if (rowCount === 0) {
      const created = await client.query(`CREATE ROLE ${name} ${attributes}`).then(
        () => true,
        (error: { code?: string }) => {
          if (error.code !== '42710') throw error; // created by a process starting at the same moment
          return false;
        },
      );
      if (created) continue;
    }
    await client.query(`ALTER ROLE ${name} WITH ${attributes}`);
  }
}

async function connect(access: SuperuserAccess, password: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: loopbackUrl(access.port, access.user, password, 'postgres'),
  });
  client.on('error', () => undefined); // a dropped connection surfaces on the next query instead
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}

function isWrongPassword(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === '28P01';
}

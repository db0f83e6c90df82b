import pg from 'pg';
import { inTransaction } from './inTransaction';

export interface DatabaseRoles {
  /** Owns the database and the event store schema; runs migrations. */
  readonly owner: string;
  /** What the service connects as: may create and own its own schemas, never the event store's. */
  readonly app: string;
}

export interface ProvisionOptions {
  /** A superuser connection URL to the cluster's `postgres` database. */
  readonly superuserUrl: string;
  readonly database: string;
  readonly roles: DatabaseRoles;
  /** The schema handed to the owner role (event_store); every other schema goes to the app role. */
  readonly ownerSchema: string;
}

/**
 * As a superuser, makes `database` exist, owned by the owner role, with nothing for PUBLIC and
 * connect/create/temp rights for the app role. Objects a superuser owns there (everything an older
 * version created, when it connected as the superuser) are handed over: the owner schema to the
 * owner role, all others (read models, rate limits) to the app role, which manages them at run time.
 * Idempotent; run at every start.
 */
export async function provisionDatabase(options: ProvisionOptions): Promise<void> {
  const { database, roles } = options;
  await withClient(options.superuserUrl, async (client) => {
    const db = client.escapeIdentifier(database);
    const owner = client.escapeIdentifier(roles.owner);
    const { rows } = await client.query<{ owner: string }>(
      'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1',
      [database],
    );
    if (rows.length === 0)
      await client.query(`CREATE DATABASE ${db} OWNER ${owner}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created by a process starting at the same moment
      });
    if (rows[0] && rows[0].owner !== roles.owner)
      await client.query(`ALTER DATABASE ${db} OWNER TO ${owner}`);
    await client.query(`REVOKE ALL ON DATABASE ${db} FROM PUBLIC`);
    await client.query(
      `GRANT CONNECT, CREATE, TEMPORARY ON DATABASE ${db} TO ${client.escapeIdentifier(roles.app)}`,
    );
  });
  const url = new URL(options.superuserUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  try {
    await inTransaction(pool, (client) => handOver(client, options), `provision:${database}`);
  } finally {
    await pool.end();
  }
}

async function handOver(client: pg.PoolClient, { roles, ownerSchema }: ProvisionOptions): Promise<void> {
  const app = client.escapeIdentifier(roles.app);
  await client.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${app}`);
  const { rows } = await client.query<{ statement: string }>(HAND_OVER_SQL, [
    ownerSchema,
    roles.owner,
    roles.app,
  ]);
  for (const { statement } of rows) await client.query(statement);
}

/**
 * ALTER ... OWNER statements for what the current (super)user owns outside the system schemas:
 * schemas, relations and routines in $1 go to $2, the rest to $3. Sequences that belong to a column
 * (serial, identity) follow their table, and may not be altered on their own.
 */
const HAND_OVER_SQL = `
WITH user_schemas AS (
  SELECT n.oid, n.nspname, n.nspowner,
         CASE WHEN n.nspname = $1 THEN $2::text ELSE $3::text END AS new_owner
    FROM pg_namespace n
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
)
SELECT format('ALTER SCHEMA %I OWNER TO %I', s.nspname, s.new_owner) AS statement, 0 AS step
  FROM user_schemas s
 WHERE s.nspowner = to_regrole(current_user) AND s.nspname <> 'public'
UNION ALL
SELECT format('ALTER %s %s OWNER TO %I',
              CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                             WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE'
                             ELSE 'TABLE' END,
              c.oid::regclass, s.new_owner), 1
  FROM pg_class c JOIN user_schemas s ON s.oid = c.relnamespace
 WHERE c.relowner = to_regrole(current_user)
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
   AND NOT (c.relkind = 'S' AND EXISTS (
         SELECT 1 FROM pg_depend d
          WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
UNION ALL
SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, s.new_owner), 2
  FROM pg_proc p JOIN user_schemas s ON s.oid = p.pronamespace
 WHERE p.proowner = to_regrole(current_user)
ORDER BY step`;

async function withClient(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

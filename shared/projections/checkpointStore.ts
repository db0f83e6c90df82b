import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { START, minPosition } from '#shared/eventStore/eventStore';
import { READ_MODEL_SCHEMA } from './projection';

export type ProjectionStatus = 'building' | 'live';

export interface CheckpointRow {
  readonly projection: string;
  readonly version: number;
  readonly status: ProjectionStatus;
  readonly position: GlobalPosition;
}

const LOCK_KEY = 'catalogue:projections:schema';

export async function migrateCheckpoints(pool: Pool): Promise<void> {
  await inTransaction(
    pool,
    async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${READ_MODEL_SCHEMA}`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${READ_MODEL_SCHEMA}.projection_checkpoints (
          projection text NOT NULL,
          version integer NOT NULL,
          status text NOT NULL,
          commit_position numeric(20) NOT NULL,
          prepare_position numeric(20) NOT NULL,
          tables text[] NOT NULL DEFAULT '{}',
          updated_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (projection, version)
        )`);
    },
    LOCK_KEY,
  );
}

type Row = {
  projection: string;
  version: number;
  status: ProjectionStatus;
  commit_position: string;
  prepare_position: string;
};

const toCheckpoint = (r: Row): CheckpointRow => ({
  projection: r.projection,
  version: r.version,
  status: r.status,
  position: { commit: BigInt(r.commit_position), prepare: BigInt(r.prepare_position) },
});

export async function readCheckpoints(db: Pool | PoolClient): Promise<CheckpointRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT projection, version, status, commit_position::text, prepare_position::text
       FROM ${READ_MODEL_SCHEMA}.projection_checkpoints`,
  );
  return rows.map(toCheckpoint);
}

/** Like readCheckpoints, but [] before any runner has created the table (42P01, 3F000). */
export async function readCheckpointsIfAny(db: Pool | PoolClient): Promise<CheckpointRow[]> {
  try {
    return await readCheckpoints(db);
  } catch (error) {
    const code = sqlState(error);
    if (code === SQLSTATE.undefinedTable || code === SQLSTATE.invalidSchemaName) return [];
    throw error;
  }
}

/**
 * The position every live read model has reached (the least of their checkpoints); undefined
 * while none is live.
 */
export async function readLivePosition(db: Pool | PoolClient): Promise<GlobalPosition | undefined> {
  const live = (await readCheckpointsIfAny(db)).filter((c) => c.status === 'live');
  return live.length === 0 ? undefined : minPosition(live.map((c) => c.position));
}

export async function insertCheckpoint(
  client: PoolClient,
  projection: string,
  version: number,
  status: ProjectionStatus,
  tables: readonly string[],
): Promise<void> {
  await client.query(
    `INSERT INTO ${READ_MODEL_SCHEMA}.projection_checkpoints (projection, version, status, commit_position, prepare_position, tables)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [projection, version, status, START.commit.toString(), START.prepare.toString(), tables],
  );
}

/**
 * Moves the checkpoints of several projections from where each one stands (`position`) to `to`, in
 * one statement. Returns the names of those whose checkpoint was not there: another runner moved
 * it first, and the caller must roll back, so an event's effects are never applied twice even with
 * two runners.
 */
export async function advanceCheckpoints(
  client: PoolClient,
  checkpoints: readonly {
    readonly projection: { readonly name: string; readonly version: number };
    readonly position: GlobalPosition;
  }[],
  to: GlobalPosition,
): Promise<string[]> {
  if (checkpoints.length === 0) return [];
  const { rows } = await client.query<{ projection: string }>({
    name: 'advanceCheckpoints',
    text: `UPDATE ${READ_MODEL_SCHEMA}.projection_checkpoints AS c
              SET commit_position = $5, prepare_position = $6, updated_at = now()
             FROM unnest($1::text[], $2::integer[], $3::numeric[], $4::numeric[]) AS f (projection, version, c_from, p_from)
            WHERE c.projection = f.projection AND c.version = f.version
              AND c.commit_position = f.c_from AND c.prepare_position = f.p_from
        RETURNING c.projection`,
    values: [
      checkpoints.map((c) => c.projection.name),
      checkpoints.map((c) => c.projection.version),
      checkpoints.map((c) => c.position.commit.toString()),
      checkpoints.map((c) => c.position.prepare.toString()),
      to.commit.toString(),
      to.prepare.toString(),
    ],
  });
  const moved = new Set(rows.map((r) => r.projection));
  return checkpoints.map((c) => c.projection.name).filter((name) => !moved.has(name));
}

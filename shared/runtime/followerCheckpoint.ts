import type { Pool } from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { type GlobalPosition, START } from '#shared/eventStore/eventStore';

/** The tables of the followers that keep a checkpoint (a fixed list: the name is put into SQL). */
export type CheckpointTable = 'processor_checkpoints' | 'relay_checkpoints';

/**
 * Where a follower of the global order (the upload processor, the Kafka relay) resumes, in the read
 * models' database (present whichever event store is configured). One row per follower name, shared
 * by its instances: each writes a position it has finished everything before, a fact that only
 * grows, so the row only moves forward whoever writes it.
 */
export class FollowerCheckpoint {
  constructor(
    private readonly pool: Pool,
    private readonly table: CheckpointTable,
    private readonly name: string,
  ) {}

  async migrate(): Promise<void> {
    await inTransaction(
      this.pool,
      async (client) => {
        await client.query(`
          CREATE TABLE IF NOT EXISTS ${this.table} (
            name text PRIMARY KEY,
            commit_position numeric(20) NOT NULL,
            prepare_position numeric(20) NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
          )`);
      },
      `catalogue:${this.table}:schema`,
    );
  }

  async read(): Promise<GlobalPosition> {
    const { rows } = await this.pool.query<{ c: string; p: string }>(
      `SELECT commit_position::text AS c, prepare_position::text AS p
         FROM ${this.table} WHERE name = $1`,
      [this.name],
    );
    const row = rows[0];
    return row ? { commit: BigInt(row.c), prepare: BigInt(row.p) } : START;
  }

  /** Moves the checkpoint to `position` unless it is already there or beyond. */
  async advance(position: GlobalPosition): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.table} AS cp (name, commit_position, prepare_position)
       VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE
         SET commit_position = EXCLUDED.commit_position,
             prepare_position = EXCLUDED.prepare_position,
             updated_at = now()
       WHERE (cp.commit_position, cp.prepare_position) < (EXCLUDED.commit_position, EXCLUDED.prepare_position)`,
      [this.name, position.commit.toString(), position.prepare.toString()],
    );
  }
}

import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { EventStore, GlobalPosition } from '#shared/eventStore/eventStore';
import { START, comparePositions } from '#shared/eventStore/eventStore';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { withClient } from '#shared/infra/postgres/withClient';
import type { Projection, ProjectionContext } from '../projection';
import { appliesTo } from '../projection';

/** Every shadow schema's name starts so; the rest is the process id and a random suffix. */
export const SHADOW_SCHEMA_PREFIX = 'rm_verify_';

/** Events read from the store at a time. */
const DEFAULT_BATCH_SIZE = 2000;

/** Quoted name of a projection's logical table in `schema` (one per version, as in `rm`). */
export function shadowTable(schema: string, projection: Pick<Projection, 'version'>, table: string): string {
  return `"${schema}"."${table}_v${projection.version}"`;
}

export function newShadowSchemaName(): string {
  return `${SHADOW_SCHEMA_PREFIX}${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** The advisory lock a verification holds on its shadow schema for as long as it lives. */
const lockKey = (schema: string): string => `catalogue:verify:${schema}`;

/**
 * A schema of private copies of projections' tables, created by the projections' own createTables
 * through a context whose `table(name)` points into it. Projections reach their tables only
 * through `ctx.table` (never `rm.` nor the public views), so applying events there touches nothing
 * live. The tables are UNLOGGED: they are thrown away at the end, so they need no WAL.
 */
export class ShadowSchema {
  private constructor(
    private readonly pool: Pool,
    readonly name: string,
    /** Holds the schema's advisory lock, so leftovers of a killed run are told from a running one. */
    private readonly owner: PoolClient,
  ) {}

  /**
   * Creates the schema and, in it, the tables of `projections`. Schemas left behind by runs that
   * were killed (their lock is free) are dropped first.
   */
  static async create(pool: Pool, projections: readonly Projection[]): Promise<ShadowSchema> {
    await dropAbandonedShadows(pool);
    const name = newShadowSchemaName();
    const owner = await pool.connect();
    const shadow = new ShadowSchema(pool, name, owner);
    try {
      await owner.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey(name)]);
      await inTransaction(pool, async (client) => {
        await client.query(`CREATE SCHEMA "${name}"`);
        for (const projection of projections) {
          await projection.createTables(shadow.context(projection, client));
          for (const table of projection.tables)
            await client.query(`ALTER TABLE ${shadowTable(name, projection, table)} SET UNLOGGED`);
        }
      });
    } catch (error) {
      await shadow.drop();
      throw error;
    }
    return shadow;
  }

  context(projection: Projection, client: PoolClient): ProjectionContext {
    return { client, table: (table) => shadowTable(this.name, projection, table) };
  }

  table(projection: Projection, table: string): string {
    return shadowTable(this.name, projection, table);
  }

  /** Drops the schema and everything in it, and releases its lock. Safe to call twice. */
  async drop(): Promise<void> {
    try {
      await this.pool.query(`DROP SCHEMA IF EXISTS "${this.name}" CASCADE`);
    } finally {
      this.owner.release(true); // closing the connection releases the advisory lock
    }
  }
}

/** Shadow schemas whose verification is gone (killed with SIGKILL, connection lost): their lock is free. */
async function dropAbandonedShadows(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1)`,
    [SHADOW_SCHEMA_PREFIX],
  );
  for (const { name } of rows) {
    if (!/^[a-z0-9_]+$/.test(name)) continue;
    const client = await pool.connect();
    try {
      const { rows: locked } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [lockKey(name)],
      );
      if (locked[0]?.ok) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    } finally {
      client.release(true);
    }
  }
}

export interface ShadowRebuildOptions {
  readonly store: Pick<EventStore, 'readAll'>;
  readonly pool: Pool;
  readonly shadow: ShadowSchema;
  /** Each projection with the position it is rebuilt up to (inclusive). */
  readonly targets: readonly { readonly projection: Projection; readonly upTo: GlobalPosition }[];
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (applied: number, position: GlobalPosition) => void;
}

/**
 * Applies the events of the store, in global order and in batches, to the shadow copies with the
 * projections' own `apply`: each projection gets every event it applies to up to its target, and
 * none after it. Returns the number of events read.
 *
 * The statements run outside any transaction block, each committing by itself: a transaction that
 * writes holds back the event store's visibility horizon (readAll sees only transactions older
 * than every running one), so one transaction per batch would delay the live projector, and with
 * it every write waiting for its read models, by up to a batch's duration. Nothing needs the
 * batch to be atomic here: the copy is private, and any failure throws it all away.
 */
export async function rebuildShadow(options: ShadowRebuildOptions): Promise<number> {
  const { store, pool, shadow, targets } = options;
  const last = targets.reduce<GlobalPosition>(
    (max, t) => (comparePositions(t.upTo, max) > 0 ? t.upTo : max),
    START,
  );
  // Discarded after: its session settings go with it.
  return withClient(
    pool,
    async (client) => {
      await client.query('SET synchronous_commit = off');
      let after = START;
      let applied = 0;
      while (comparePositions(after, last) < 0) {
        options.signal?.throwIfAborted();
        const read = await store.readAll({ after, maxCount: options.batchSize ?? DEFAULT_BATCH_SIZE });
        const batch = read.filter((e) => comparePositions(e.position, last) <= 0);
        if (batch.length === 0) {
          if (read.length > 0) break;
          throw new Error(
            'the event store ended before the position the read models stand at (were events deleted?)',
          );
        }
        for (const { projection, upTo } of targets) {
          const events = batch.filter(
            (e) => appliesTo(projection, e.type) && comparePositions(e.position, upTo) <= 0,
          );
          if (events.length > 0) await projection.apply(shadow.context(projection, client), events);
        }
        applied += batch.length;
        after = batch[batch.length - 1]!.position;
        options.onProgress?.(applied, after);
      }
      return applied;
    },
    { discard: true },
  );
}

import type { Pool, PoolClient } from 'pg';
import type { EventStore, GlobalPosition } from '#shared/eventStore/eventStore';
import { comparePositions, formatPosition } from '#shared/eventStore/eventStore';
import { readCheckpointsIfAny } from '../checkpointStore';
import type { CheckpointRow } from '../checkpointStore';
import type { Projection } from '../projection';
import { physicalTable } from '../projection';
import type { Difference } from './compareReadModels';
import { compareTable } from './compareReadModels';
import { ShadowSchema, rebuildShadow } from './shadowRebuild';

export interface VerifyReadModelsOptions {
  readonly store: Pick<EventStore, 'readAll'>;
  /** The database of the live read models. Only read, inside one snapshot. */
  readonly live: Pool;
  /**
   * Where the shadow schema is built: by default the live database itself (a private schema,
   * dropped at the end). A test may give an empty scratch database.
   */
  readonly shadow?: Pool;
  readonly projections: readonly Projection[];
  readonly batchSize?: number;
  /** Aborting stops the build between two batches; the shadow schema is dropped all the same. */
  readonly signal?: AbortSignal;
  /** How many events the store holds up to `position` (for progress), when the caller can tell. */
  readonly countEvents?: (upTo: GlobalPosition) => Promise<number | undefined>;
  readonly onProgress?: (applied: number, total: number | undefined) => void;
  readonly onDifference?: (difference: Difference) => void;
}

export interface VerifiedProjection {
  readonly name: string;
  readonly version: number;
  /** Compared at this position (its live checkpoint in the snapshot); undefined when skipped. */
  readonly position: GlobalPosition | undefined;
  readonly status: CheckpointRow['status'] | undefined;
  /** Why it was not compared, or what to know about how it was. */
  readonly note: string | undefined;
}

export interface VerifyReport {
  readonly projections: readonly VerifiedProjection[];
  readonly tables: number;
  readonly liveRows: number;
  readonly events: number;
  readonly differences: number;
  readonly buildSeconds: number;
  readonly compareSeconds: number;
}

const seconds = (since: bigint): number => Number(process.hrtime.bigint() - since) / 1e9;

/**
 * Rebuilds `projections` from the events into a shadow schema and compares every table with the
 * live one, row by row, while the service keeps running: no lock is taken that the projector or
 * the API would wait for, and nothing live is written.
 *
 * The live read models move on meanwhile, so they are read in ONE repeatable-read snapshot, taken
 * first: the checkpoints seen in it are written in the same transactions as the rows, so each
 * projection's tables in the snapshot are exactly its events up to its checkpoint, and the shadow
 * copy is built up to that position and not one event further. A projection whose version in
 * this code is 'building' (a version swap in progress) is compared at its own checkpoint, from its
 * own new tables; one whose version is not installed in that database (the service runs other
 * code) is skipped, with a note. The snapshot is read-only and gets no transaction id, so it does
 * not hold back the event store's visibility horizon. What it does hold, until the end: the
 * oldest snapshot for VACUUM (dead rows are kept meanwhile), and from its comparison on, a share
 * lock on each live table read, so a version swap that drops an old version's tables in that
 * window waits for the comparison to end.
 */
export async function verifyReadModels(options: VerifyReadModelsOptions): Promise<VerifyReport> {
  const shadowPool = options.shadow ?? options.live;
  const snapshot = await options.live.connect();
  let shadow: ShadowSchema | undefined;
  try {
    await snapshot.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // A build of millions of events keeps this transaction open (idle) for minutes.
    await snapshot.query(
      `SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL statement_timeout = 0`,
    );
    const checkpoints = await readCheckpointsIfAny(snapshot);
    const verified = options.projections.map((p) => planned(p, checkpoints));
    const targets = options.projections.flatMap((projection, i) => {
      const upTo = verified[i]!.position;
      return upTo ? [{ projection, upTo }] : [];
    });
    const compared = targets.map((t) => t.projection);
    const end = targets
      .map((t) => t.upTo)
      .reduce<GlobalPosition | undefined>(
        (max, p) => (!max || comparePositions(p, max) > 0 ? p : max),
        undefined,
      );
    const total = end ? await options.countEvents?.(end) : 0;

    const building = process.hrtime.bigint();
    shadow = await ShadowSchema.create(shadowPool, compared);
    options.onProgress?.(0, total);
    const events = await rebuildShadow({
      store: options.store,
      pool: shadowPool,
      shadow,
      targets,
      batchSize: options.batchSize,
      signal: options.signal,
      onProgress: (applied) => options.onProgress?.(applied, total),
    });
    const buildSeconds = seconds(building);

    const comparing = process.hrtime.bigint();
    let tables = 0;
    let liveRows = 0;
    let differences = 0;
    const rebuilt = await shadowPool.connect();
    try {
      await rebuilt.query('BEGIN READ ONLY');
      for (const projection of compared) {
        for (const table of projection.tables) {
          options.signal?.throwIfAborted();
          const result = await compareTable(
            table,
            { client: snapshot, table: physicalTable(projection, table) },
            { client: rebuilt, table: shadow.table(projection, table) },
            (difference) => options.onDifference?.(difference),
            options.signal,
          );
          tables++;
          liveRows += result.liveRows;
          differences += result.differences;
        }
      }
      await rebuilt.query('COMMIT');
    } finally {
      rebuilt.release();
    }
    return {
      projections: verified,
      tables,
      liveRows,
      events,
      differences,
      buildSeconds,
      compareSeconds: seconds(comparing),
    };
  } finally {
    await endSnapshot(snapshot);
    await shadow?.drop();
  }
}

function planned(projection: Projection, checkpoints: readonly CheckpointRow[]): VerifiedProjection {
  const base = { name: projection.name, version: projection.version };
  const row = checkpoints.find((c) => c.projection === projection.name && c.version === projection.version);
  if (row) {
    const note =
      row.status === 'building'
        ? `version ${projection.version} is being built (a version swap is in progress): compared at its own checkpoint ${formatPosition(row.position)}`
        : undefined;
    return { ...base, position: row.position, status: row.status, note };
  }
  const others = checkpoints.filter((c) => c.projection === projection.name);
  const note =
    others.length > 0
      ? `not installed in this database (it has ${others.map((c) => `v${c.version} ${c.status}`).join(', ')}; the service runs another version of the code)`
      : 'not installed in this database (no checkpoint: has the projector ever run?)';
  return { ...base, position: undefined, status: undefined, note };
}

async function endSnapshot(snapshot: PoolClient): Promise<void> {
  try {
    await snapshot.query('ROLLBACK');
    snapshot.release();
  } catch (error) {
    snapshot.release(error instanceof Error ? error : true);
  }
}

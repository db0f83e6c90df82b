import type { PoolClient } from 'pg';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import type { CopiedEvents } from '#shared/eventStore/postgres/eventsCopy';

/**
 * A PostgreSQL read model. Its tables are physically `rm.<table>_v<version>` and read through views
 * `public.<table>`, so a new version is built beside the old one and swapped in atomically.
 */
export interface ProjectionContext {
  readonly client: PoolClient;
  /** Quoted physical name of one of this projection's logical tables, for this version. */
  readonly table: (name: string) => string;
}

export interface Projection {
  readonly name: string;
  readonly version: number;
  /** Logical table names; each gets a view of that name in the public schema. */
  readonly tables: readonly string[];
  /** The event types it applies; 'all' for a follower of every event (the audit log). */
  readonly eventTypes: ReadonlySet<string> | 'all';
  createTables(ctx: ProjectionContext): Promise<void>;
  /**
   * Indexes only readers use, never `apply`: each one idempotent statement (`CREATE INDEX IF NOT
   * EXISTS <name>`). Tables filled from the events in bulk (a catch-up from empty tables, a new
   * version building beside the live one) get them once at the end, which is several times faster
   * than keeping them up row by row: built when the version goes live (the end of a catch-up, the
   * swap, or at once for a first version installed live), and by every runner start when missing.
   */
  readerIndexes?(ctx: ProjectionContext): readonly string[];
  /**
   * While this version builds beside a live older one, the query side (already this version's
   * code) reads the older tables. For a layout change the readers cannot do without (a new column
   * or table), the views they read, in this version's columns, over the live version's physical
   * tables (`live(name)`): `{logical table: SELECT ...}`. Undefined, or a table left out: the
   * view stays `SELECT *` of the live table. Swapping in repoints every view at this version.
   */
  compatibleViews?(
    liveVersion: number,
    live: (name: string) => string,
  ): Readonly<Record<string, string>> | undefined;
  /**
   * Applies events (already filtered to eventTypes) inside the runner's transaction. Returns cache
   * keys whose read-model rows changed (e.g. "user:7"), so caches in other components can drop them.
   */
  apply(ctx: ProjectionContext, events: readonly RecordedEvent[]): Promise<readonly string[]>;
  /**
   * Optional, for a catch-up from the PostgreSQL store's own table (read without upcasting): begins
   * one that takes the events as binary COPY bytes (CopiedEvents) instead of RecordedEvent objects.
   * Called once per catch-up, on a connection outside any batch's transaction; the session's apply
   * then takes every batch in order (every event, eventTypes not applied), each in the runner's
   * transaction with the checkpoint, and writes exactly what `apply` would. A batch that fails ends
   * the catch-up: the session is not used again (a new one starts from what committed).
   */
  beginCopyCatchUp?(ctx: ProjectionContext): Promise<CopyCatchUp>;
}

/** A catch-up begun by Projection.beginCopyCatchUp. */
export interface CopyCatchUp {
  /**
   * Optional: the batch the runner will apply next, announced while the one before is still being
   * written and committed; the session may compute what it will write meanwhile (and write nothing).
   */
  prepare?(events: CopiedEvents): void;
  apply(ctx: ProjectionContext, events: CopiedEvents): Promise<readonly string[]>;
}

export const READ_MODEL_SCHEMA = 'rm';

export const appliesTo = (projection: Pick<Projection, 'eventTypes'>, type: string): boolean =>
  projection.eventTypes === 'all' || projection.eventTypes.has(type);

export function physicalTable(projection: Pick<Projection, 'version'>, name: string): string {
  return `"${READ_MODEL_SCHEMA}"."${name}_v${projection.version}"`;
}

export function contextFor(projection: Projection, client: PoolClient): ProjectionContext {
  return { client, table: (name) => physicalTable(projection, name) };
}

/**
 * A projection's `apply` from a function of one event (as its domain type; the recorded event
 * alongside, for its stream revision): events in order, the changed keys of all of them.
 */
export function applyInOrder<Event extends { readonly type: string; readonly data: unknown }>(
  applyOne: (ctx: ProjectionContext, event: Event, recorded: RecordedEvent) => Promise<readonly string[]>,
): Projection['apply'] {
  return async (ctx, events) => {
    const changed: string[] = [];
    for (const recorded of events)
      changed.push(...(await applyOne(ctx, { type: recorded.type, data: recorded.data } as Event, recorded)));
    return changed;
  };
}

/**
 * applyInOrder, except that each run of consecutive events `batchable` accepts goes to `applyRun`
 * as one array, for set-based SQL (a rebuild replays long runs of creates); the order of runs and
 * single events is kept.
 */
export function applyInRuns<
  Event extends { readonly type: string; readonly data: unknown },
  Run extends Event,
>(
  batchable: (event: Event) => event is Run,
  applyRun: (
    ctx: ProjectionContext,
    run: readonly Run[],
    recorded: readonly RecordedEvent[],
  ) => Promise<readonly string[]>,
  applyOne: (ctx: ProjectionContext, event: Event, recorded: RecordedEvent) => Promise<readonly string[]>,
): Projection['apply'] {
  return async (ctx, events) => {
    const changed: string[] = [];
    let run: Run[] = [];
    let runRecorded: RecordedEvent[] = [];
    const flush = async (): Promise<void> => {
      if (run.length > 0) changed.push(...(await applyRun(ctx, run, runRecorded)));
      run = [];
      runRecorded = [];
    };
    for (const recorded of events) {
      const event = { type: recorded.type, data: recorded.data } as Event;
      if (batchable(event)) {
        run.push(event);
        runRecorded.push(recorded);
        continue;
      }
      await flush();
      changed.push(...(await applyOne(ctx, event, recorded)));
    }
    await flush();
    return changed;
  };
}

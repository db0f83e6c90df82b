/**
 * What the catalogue replays (categories, species, atlases "as of" a point and in their history)
 * read: streams from the event store up to a point, and from the audit log which resources ever
 * named a resource up to it (the candidates for its counts and member lists). The audit log only
 * says where to look; every state is folded from the store's events.
 */
import type { Pool } from 'pg';
import {
  type EventStore,
  type GlobalPosition,
  type RecordedEvent,
  START,
  comparePositions,
} from '#shared/eventStore/eventStore';
import type { AuditResourceType } from '#shared/audit/auditedEvent';
import type { AsOf } from '#shared/audit/asOf';

/**
 * A point in the global order: every event up to and including the audit log's event `seq` (its
 * position `position`). seq 0 / START: before the first event.
 */
export interface ReplayPoint {
  readonly seq: number;
  readonly position: GlobalPosition;
}

export const BEFORE_EVERYTHING: ReplayPoint = { seq: 0, position: START };

/** The point right before the event at (seq, position): every event strictly before it. */
export function pointBefore(point: ReplayPoint): ReplayPoint {
  if (point.seq <= 1) return BEFORE_EVERYTHING;
  // Positions are pairs of integers ordered lexicographically: (c, p-1) is the greatest one below (c, p).
  return {
    seq: point.seq - 1,
    position: { commit: point.position.commit, prepare: point.position.prepare - 1n },
  };
}

export interface CatalogueReplaySource {
  /** The events of each stream up to the position (inclusive), one array per name, in the names' order. */
  readStreams(streamNames: readonly string[], upTo: GlobalPosition): Promise<RecordedEvent[][]>;
  /** Ids of the resources of `type` whose public events up to `seq` name any of `refs` ("species:3"). */
  resourcesNaming(refs: readonly string[], type: AuditResourceType, seq: number): Promise<string[]>;
  /** The ids, ordered as the read models order atlases: by lower(name), then id (the database's collation). */
  orderByName(items: readonly { readonly id: number; readonly name: string }[]): Promise<number[]>;
}

/** Stream reads in flight at once for one replay: many members, few connections. */
const READ_CONCURRENCY = 8;

async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The source over the read models' database (audit log) and the event store. */
export function catalogueReplaySource(readModels: Pool, store: EventStore): CatalogueReplaySource {
  return {
    readStreams: (names, upTo) =>
      comparePositions(upTo, START) <= 0
        ? Promise.resolve(names.map(() => []))
        : mapBounded(names, READ_CONCURRENCY, (name) => store.readStream(name, { toPosition: upTo })),

    async resourcesNaming(refs, type, seq) {
      if (refs.length === 0 || seq <= 0) return [];
      const { rows } = await readModels.query<{ resource_id: string }>(
        `SELECT DISTINCT e.resource_id
           FROM audit_references r JOIN audit_events e ON e.seq = r.seq
          WHERE r.ref = ANY($1::text[]) AND r.seq <= $2 AND e.resource_type = $3 AND NOT e.internal`,
        [refs, seq, type],
      );
      return rows.map((r) => r.resource_id);
    },

    async orderByName(items) {
      if (items.length <= 1) return items.map((i) => i.id);
      const { rows } = await readModels.query<{ id: number }>(
        `SELECT id FROM unnest($1::integer[], $2::text[]) AS t (id, name) ORDER BY lower(name), id`,
        [items.map((i) => i.id), items.map((i) => i.name)],
      );
      return rows.map((r) => r.id);
    },
  };
}

interface PointRow {
  readonly seq: string;
  readonly commit_position: string;
  readonly prepare_position: string;
}

/**
 * The point an `as_of` names: the last event of the global order at or before the position, or
 * the last one recorded at or before the time (by recorded_hwm, so the point is always a prefix of
 * the global order: an event recorded earlier but ordered after a later one is left out with it).
 * A time or position beyond the newest event is the newest event (the current state).
 */
export async function replayPointOf(readModels: Pool, asOf: AsOf): Promise<ReplayPoint> {
  const { rows } =
    asOf.kind === 'position'
      ? await readModels.query<PointRow>(
          `SELECT seq, commit_position, prepare_position FROM audit_events
            WHERE (commit_position, prepare_position) <= ($1::bigint, $2::bigint)
            ORDER BY commit_position DESC, prepare_position DESC LIMIT 1`,
          [bigintParameter(asOf.position.commit), bigintParameter(asOf.position.prepare)],
        )
      : await readModels.query<PointRow>(
          `SELECT seq, commit_position, prepare_position FROM audit_events
            WHERE recorded_hwm < $1::timestamptz + interval '1 millisecond'
            ORDER BY recorded_hwm DESC, seq DESC LIMIT 1`,
          [asOf.time],
        );
  const row = rows[0];
  return row ? pointOfRow(row) : BEFORE_EVERYTHING;
}

const INT8_MAX = 2n ** 63n - 1n;
const INT8_MIN = -(2n ** 63n);

/** A position part as a bigint parameter: one beyond PostgreSQL's range is at that range's end. */
const bigintParameter = (value: bigint): string =>
  (value > INT8_MAX ? INT8_MAX : value < INT8_MIN ? INT8_MIN : value).toString();

/** The point of an audit_events row (the state right after its event). */
export const pointOfRow = (row: PointRow): ReplayPoint => ({
  seq: Number(row.seq),
  position: { commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) },
});

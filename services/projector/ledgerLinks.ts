import type { EventStore, GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { comparePositions } from '#shared/eventStore/eventStore';
import { createHash } from 'node:crypto';
import { canonicalEventText } from '#shared/audit/ledgerChain';
import type { Queryable } from '#shared/audit/ledgerHead';
import type { EventText } from './ledgerEventTexts';
import { PagedLookahead, type Page } from './ledgerPages';

/** One row of the ledger as verify-ledger reads it. */
export interface LedgerRow {
  readonly seq: number;
  readonly eventId: string;
  readonly commit: bigint;
  readonly prepare: bigint;
  readonly hash: Buffer;
}

/** Events after `after` up to `storeHead` (the store's head when the run began), one page. */
export async function readEvents(
  store: EventStore,
  after: GlobalPosition,
  storeHead: GlobalPosition,
  pageSize: number,
): Promise<Page<RecordedEvent>> {
  const page = await store.readAll({ after, maxCount: pageSize });
  let end = page.length;
  while (end > 0 && comparePositions(page[end - 1]!.position, storeHead) > 0) end--;
  return { items: end === page.length ? page : page.slice(0, end), done: end < pageSize };
}

/** Ledger rows with seq in (afterSeq, min(lastSeq, afterSeq + pageSize)]. */
export async function readRows(
  db: Queryable,
  afterSeq: number,
  lastSeq: number,
  pageSize: number,
): Promise<Page<LedgerRow>> {
  if (afterSeq >= lastSeq) return { items: [], done: true };
  const last = Math.min(lastSeq, afterSeq + pageSize);
  const { rows } = await db.query<{
    seq: string;
    event_id: string;
    commit_position: string;
    prepare_position: string;
    hash: Buffer;
  }>(
    // seq numbers the rows 1, 2, 3...: the page is a seq range, which the primary key answers alone
    // whatever the planner believes of the table (just built, not yet analysed, it expected a few
    // rows in `seq > $1` and read all the rest, sorted, for every page).
    `SELECT seq, event_id, commit_position, prepare_position, hash FROM audit_events
      WHERE seq > $1 AND seq <= $2 ORDER BY seq`,
    [afterSeq, last],
  );
  const items = rows.map((r) => ({
    seq: Number(r.seq),
    eventId: r.event_id,
    commit: BigInt(r.commit_position),
    prepare: BigInt(r.prepare_position),
    hash: r.hash,
  }));
  return { items, done: last >= lastSeq };
}

/** A ledger row as the link check reads it: positions as decimal text, the hash as hex. */
interface RowText {
  readonly seq: number;
  readonly eventId: string;
  readonly commit: string;
  readonly prepare: string;
  readonly hash: string;
}

async function readRowTexts(
  db: Queryable,
  afterSeq: number,
  lastSeq: number,
  pageSize: number,
): Promise<Page<RowText>> {
  if (afterSeq >= lastSeq) return { items: [], done: true };
  const last = Math.min(lastSeq, afterSeq + pageSize);
  const { rows } = await db.query<{ seq: string; e: string; c: string; p: string; h: string }>(
    // Ordered by the column, qualified: a bare `seq` would be the output column, the text.
    `SELECT a.seq::text AS seq, a.event_id::text AS e, a.commit_position::text AS c,
            a.prepare_position::text AS p, encode(a.hash, 'hex') AS h
       FROM audit_events a WHERE a.seq > $1 AND a.seq <= $2 ORDER BY a.seq`,
    [afterSeq, last],
  );
  const items = rows.map((r) => ({ seq: Number(r.seq), eventId: r.e, commit: r.c, prepare: r.p, hash: r.h }));
  return { items, done: last >= lastSeq };
}

/** A stretch of the ledger to check link by link: seq `fromSeq` to `toSeq`. */
export interface LinkSegment {
  readonly fromSeq: number;
  readonly toSeq: number;
  /** The ledger's stored hash at fromSeq - 1 (genesis for seq 1). */
  readonly previousHash: Buffer;
  /** The ledger's stored position at fromSeq - 1 (START for seq 1): the events are read after it. */
  readonly startPosition: GlobalPosition;
  /** The store's head when the run began: nothing after it is read. */
  readonly storeHead: GlobalPosition;
  readonly pageSize: number;
}

/** The first seq of the segment whose link does not hold, or undefined when all of them hold. */
export interface LinkCheck {
  readonly firstBroken: number | undefined;
  /** Links checked and found to hold. */
  readonly checked: number;
}

/**
 * Where a link check reads the events: one page of EventTexts after a position, up to the store's
 * head at the start (readEventTexts straight from PostgreSQL, or eventTextsOf over store.readAll).
 */
export type EventTextSource = (
  after: GlobalPosition,
  upTo: GlobalPosition,
  pageSize: number,
) => Promise<Page<EventText>>;

/** The events as store.readAll gives them (upcast, when the store upcasts), as EventTexts. */
export function eventTextsOf(store: EventStore): EventTextSource {
  return async (after, upTo, pageSize) => {
    const page = await readEvents(store, after, upTo, pageSize);
    return {
      done: page.done,
      items: page.items.map((event) => ({
        id: event.id,
        commit: event.position.commit.toString(),
        prepare: event.position.prepare.toString(),
        bytes: Buffer.from(canonicalEventText(event), 'utf8'),
      })),
    };
  };
}

const positionOf = (item: EventText): GlobalPosition => ({
  commit: BigInt(item.commit),
  prepare: BigInt(item.prepare),
});

/**
 * Checks every link of a segment on its own: ledger row n holds the event the store has n-th after
 * the segment's start, at the same position, and its hash is SHA-256(the STORED hash of row n - 1 ‖
 * the event's canonical bytes). When every link from seq 1 (or from a proven seq) up to n holds, the
 * stored hashes are the recomputed chain by induction, so a segment checked this way, beside the
 * segments before it, proves what the sequential walk proves; and the first link that fails is where
 * the sequential walk, carrying its own recomputed hash, would stop too. Segments are thus checked in
 * parallel (ledgerSegmentWorker.ts), the first broken one in seq order then named by the walk.
 * `stop` is asked between pages: true ends the check early (its answer no longer matters).
 */
export async function checkLinks(
  events: EventTextSource,
  pool: Queryable,
  segment: LinkSegment,
  onPage?: (checked: number) => void,
  stop?: () => boolean,
): Promise<LinkCheck> {
  const { fromSeq, toSeq, storeHead, pageSize } = segment;
  const texts = new PagedLookahead<EventText>((last) =>
    events(last ? positionOf(last) : segment.startPosition, storeHead, pageSize),
  );
  const rows = new PagedLookahead<RowText>((last) =>
    readRowTexts(pool, last?.seq ?? fromSeq - 1, toSeq, pageSize),
  );
  const settle = () => Promise.all([rows.settle(), texts.settle()]);
  let previous = segment.previousHash;
  for (let seq = fromSeq; seq <= toSeq; seq++) {
    if (rows.needsFill()) {
      if (seq > fromSeq) onPage?.(seq - fromSeq);
      if (stop?.()) {
        await settle();
        return { firstBroken: undefined, checked: seq - fromSeq };
      }
      await rows.fill();
    }
    if (texts.needsFill()) await texts.fill();
    const row = rows.peek(0);
    const event = texts.peek(0);
    const holds =
      row !== undefined &&
      row.seq === seq &&
      event !== undefined &&
      event.id === row.eventId &&
      event.commit === row.commit &&
      event.prepare === row.prepare &&
      createHash('sha256').update(previous).update(event.bytes).digest('hex') === row.hash;
    if (!holds) {
      await settle();
      return { firstBroken: seq, checked: seq - fromSeq };
    }
    previous = Buffer.from(row.hash, 'hex');
    rows.shift();
    texts.shift();
  }
  return { firstBroken: undefined, checked: toSeq - fromSeq + 1 };
}

import type { EventStore, GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { comparePositions } from '#shared/eventStore/eventStore';
import type { Queryable } from '#shared/audit/ledgerHead';
import type { Page } from './ledgerPages';

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
    `SELECT seq, event_id, commit_position, prepare_position, hash FROM ledger
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

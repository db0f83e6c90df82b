import pg from 'pg';
import { UPCASTERS } from '#shared/domain/upcasters';
import type { EventStore, GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { START, formatPosition } from '#shared/eventStore/eventStore';
import { GENESIS_HASH, chainHash } from '#shared/audit/ledgerChain';
import { type LedgerHead, type Queryable, readLedgerHead } from '#shared/audit/ledgerHead';
import { type LedgerRow, type LinkSegment, readEvents, readRows } from './ledgerLinks';
import { PagedLookahead } from './ledgerPages';
import {
  DEFAULT_MIN_DIRECT_EVENTS,
  type DirectVerification,
  firstBrokenLink,
  verifyWorkers,
} from './parallelLedgerCheck';
import { checkLinksByCopy } from './ledgerCopyLinks';

/**
 * What verify-ledger found first, when the events and the ledger disagree:
 * - altered: the same event at seq n, but its chained hash differs (its stored bytes changed);
 * - removed: the ledger's event n is no longer in the store;
 * - inserted: the store has an event, before the ledger's event n, that the ledger never chained;
 * - reordered: the ledger's events n and n+1 are in the store the other way round;
 * - replaced: another event stands where the ledger's event n was;
 * - moved: the same event and hash, but at another position in the store;
 * - ledger_edited: the ledger row n itself was changed (its hash or event id does not follow from
 *   the events, while the chain after it does), or a row is missing from the ledger.
 */
export type LedgerFaultKind =
  'altered' | 'removed' | 'inserted' | 'reordered' | 'replaced' | 'moved' | 'ledger_edited';

export interface LedgerFault {
  readonly kind: LedgerFaultKind;
  /** The ledger's seq where the chain breaks (1-based). */
  readonly seq: number;
  /** The position named: the store's for an event it holds, the ledger's for one it lost. */
  readonly position: string;
  readonly eventId: string;
}

export interface LedgerVerification {
  readonly ok: boolean;
  /** The first seq verified (1: the whole chain). */
  readonly fromSeq: number;
  /** Ledger rows checked against the events (all of them from fromSeq when ok). */
  readonly eventsChecked: number;
  /** The ledger's head when the run began: what was verified. */
  readonly head: LedgerHead;
  /** Events the store held at the start beyond the ledger's head (not a failure: it catches up). */
  readonly newerEvents: number;
  readonly fault: LedgerFault | undefined;
  /** One line for a person: "ledger verified: ..." or the fault. */
  readonly message: string;
  readonly startedAt: Date;
  readonly finishedAt: Date;
}

export interface VerifyLedgerOptions {
  readonly store: EventStore;
  /** The read models' database (the `ledger` view). */
  readonly pool: Queryable;
  /** Events and ledger rows per read; the next page is read while this one is hashed. */
  readonly pageSize?: number;
  /**
   * Verify from this seq on (default 1, the whole chain), starting from the ledger's own hash and
   * position at seq - 1: for a routine run after a full one has proven the rows before.
   */
  readonly fromSeq?: number;
  /** After each page: ledger rows checked so far, of `total`. */
  readonly onProgress?: (checked: number, total: number) => void;
  /**
   * Read the PostgreSQL tables directly (the PostgreSQL event store, no upcaster registered): every
   * link is checked from the tables first, in this thread or in segments by worker threads
   * (ledgerCopyLinks.ts), and the walk only names the first broken one. The outcome, message and
   * fault named are the walk's.
   */
  readonly direct?: DirectVerification;
}

export const DEFAULT_VERIFY_PAGE_SIZE = 10_000;

const rowPosition = (row: LedgerRow): string => `${row.commit}.${row.prepare}`;

/**
 * Recomputes the ledger's chain from the events in global order and compares it, seq by seq, with
 * the ledger's rows (event id, hash and position) up to the ledger's head at the start. Both are read
 * in pages, the next page of each while this one is hashed. Stops at the first disagreement and
 * names it; events newer than the ledger's head are counted, not verified. With `parallel`, segments
 * of the ledger are checked link by link in worker threads first (ledgerLinks.ts), and the walk
 * below only names the first broken link they found, from that link on.
 */
export async function verifyLedger(options: VerifyLedgerOptions): Promise<LedgerVerification> {
  const startedAt = new Date();
  const pageSize = options.pageSize ?? DEFAULT_VERIFY_PAGE_SIZE;
  // The ledger's head first: every event it chained was readable then, so the store's head read
  // after it is at or past them all.
  const head = await readLedgerHead(options.pool);
  const storeHead = await options.store.headPosition();
  const fromSeq = Math.max(1, Math.min(options.fromSeq ?? 1, head.count + 1));
  const total = head.count - fromSeq + 1;
  const finish = (
    fault: LedgerFault | undefined,
    checked: number,
    newerEvents: number,
  ): LedgerVerification => ({
    ok: fault === undefined,
    fromSeq,
    eventsChecked: checked,
    head,
    newerEvents,
    fault,
    message: fault ? faultMessage(fault) : verifiedMessage(head, fromSeq, newerEvents),
    startedAt,
    finishedAt: new Date(),
  });

  const { direct, onProgress } = options;
  if (
    direct &&
    UPCASTERS.size === 0 &&
    total > 0 &&
    total >= (direct.minEvents ?? DEFAULT_MIN_DIRECT_EVENTS)
  ) {
    const segments = await planSegments(options.pool, fromSeq, head.count, {
      count: Math.min(verifyWorkers(direct), total),
      storeHead,
      pageSize,
    });
    onProgress?.(0, total);
    const report = (checked: number) => onProgress?.(checked, total);
    const broken =
      segments.length > 1
        ? await firstBrokenLink(direct, segments, report)
        : await firstBrokenLinkHere(direct, segments[0]!, report);
    if (broken === undefined) {
      const last = await ledgerPoint(options.pool, head.count);
      if (last) {
        onProgress?.(total, total);
        return finish(undefined, total, await countNewer(options.store, last.position, storeHead, pageSize));
      }
    } else {
      // Every link before `broken` holds: the walk from there carries the same hash the whole walk would.
      const walked = await walk(options, head, storeHead, broken, pageSize);
      // It stops at that link too, unless the ledger or the events changed meanwhile: not verified.
      if (!walked.fault)
        throw new Error(
          `the link at seq ${broken} was found broken, then intact: the ledger or the events changed during the run`,
        );
      return finish(walked.fault, broken - fromSeq + walked.checked, walked.newerEvents);
    }
  }
  const walked = await walk(options, head, storeHead, fromSeq, pageSize, (checked) =>
    onProgress?.(checked, total),
  );
  return finish(walked.fault, walked.checked, walked.newerEvents);
}

/** The whole ledger's links checked in this thread, over two connections of its own. */
async function firstBrokenLinkHere(
  direct: DirectVerification,
  segment: LinkSegment,
  onProgress: (checked: number) => void,
): Promise<number | undefined> {
  const pool = new pg.Pool({ connectionString: direct.connectionString, max: 2 });
  pool.on('error', () => undefined);
  try {
    const { firstBroken } = await checkLinksByCopy(
      { events: pool, ledger: pool, schema: direct.schema },
      segment,
      onProgress,
    );
    return firstBroken;
  } finally {
    await pool.end().catch(() => undefined);
  }
}

interface Walked {
  readonly fault: LedgerFault | undefined;
  /** Rows found to hold, from the walk's first seq. */
  readonly checked: number;
  readonly newerEvents: number;
}

/**
 * The one-thread walk from `fromSeq` to the head: the chain recomputed event by event from the
 * ledger's hash at fromSeq - 1, stopping at the first disagreement, which it names.
 */
async function walk(
  options: VerifyLedgerOptions,
  head: LedgerHead,
  storeHead: GlobalPosition,
  fromSeq: number,
  pageSize: number,
  onProgress?: (checked: number) => void,
): Promise<Walked> {
  const start = await startingPoint(options.pool, fromSeq);
  const events = new PagedLookahead<RecordedEvent>((last) =>
    readEvents(options.store, last?.position ?? start.position, storeHead, pageSize),
  );
  const rows = new PagedLookahead<LedgerRow>((last) =>
    readRows(options.pool, last?.seq ?? fromSeq - 1, head.count, pageSize),
  );
  const stopped = async (fault: LedgerFault, checked: number): Promise<Walked> => {
    await Promise.all([rows.settle(), events.settle()]);
    return { fault, checked, newerEvents: 0 };
  };

  let previous = start.hash;
  for (let seq = fromSeq; seq <= head.count; seq++) {
    if (rows.needsFill()) {
      await rows.fill();
      onProgress?.(seq - fromSeq);
    }
    if (events.needsFill()) await events.fill();
    const row = rows.peek(0);
    const event = events.peek(0);
    if (!row || row.seq !== seq)
      return stopped(
        {
          kind: 'ledger_edited',
          seq,
          position: event ? formatPosition(event.position) : `seq ${seq}`,
          eventId: event?.id ?? '',
        },
        seq - fromSeq,
      );
    if (!event) return stopped(fault('removed', row), seq - fromSeq);
    const hash = chainHash(previous, event);
    const problem = compare(row, event, hash, rows, events);
    if (problem) return stopped(problem, seq - fromSeq);
    previous = hash;
    rows.shift();
    events.shift();
  }
  const checked = head.count - fromSeq + 1;
  onProgress?.(checked);
  return { fault: undefined, checked, newerEvents: await events.drain() };
}

/**
 * The ledger from `fromSeq` to `toSeq` cut into `count` segments of about the same length, each
 * starting from the ledger's stored hash and position before it. A boundary whose row before it is
 * missing is left out (the segment before runs on through it, and names the missing row).
 */
async function planSegments(
  db: Queryable,
  fromSeq: number,
  toSeq: number,
  plan: { count: number; storeHead: GlobalPosition; pageSize: number },
): Promise<LinkSegment[]> {
  const total = toSeq - fromSeq + 1;
  const starts: { seq: number; hash: Buffer; position: GlobalPosition }[] = [];
  for (let i = 0; i < plan.count; i++) {
    const seq = fromSeq + Math.floor((total * i) / plan.count);
    if (starts.length > 0 && starts[starts.length - 1]!.seq === seq) continue;
    const point = seq === 1 ? { hash: GENESIS_HASH, position: START } : await ledgerPoint(db, seq - 1);
    if (point) starts.push({ seq, ...point });
    else if (i === 0) throw new Error(`the ledger has no row at seq ${seq - 1} to start from`);
  }
  return starts.map((start, i) => ({
    fromSeq: start.seq,
    toSeq: i + 1 < starts.length ? starts[i + 1]!.seq - 1 : toSeq,
    previousHash: start.hash,
    startPosition: start.position,
    storeHead: plan.storeHead,
    pageSize: plan.pageSize,
  }));
}

/** Events after `after` up to the store's head at the start. */
async function countNewer(
  store: EventStore,
  after: GlobalPosition,
  storeHead: GlobalPosition,
  pageSize: number,
): Promise<number> {
  return new PagedLookahead<RecordedEvent>((last) =>
    readEvents(store, last?.position ?? after, storeHead, pageSize),
  ).drain();
}

/** The ledger's stored hash and position at `seq`, undefined when it has no such row. */
async function ledgerPoint(
  db: Queryable,
  seq: number,
): Promise<{ hash: Buffer; position: GlobalPosition } | undefined> {
  const { rows } = await db.query<{ hash: Buffer; commit_position: string; prepare_position: string }>(
    'SELECT hash, commit_position, prepare_position FROM ledger WHERE seq = $1',
    [seq],
  );
  const row = rows[0];
  return row
    ? {
        hash: row.hash,
        position: { commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) },
      }
    : undefined;
}

/** The chain's hash and the store's position before `fromSeq`: genesis, or the ledger's row fromSeq - 1. */
async function startingPoint(
  db: Queryable,
  fromSeq: number,
): Promise<{ hash: Buffer; position: GlobalPosition }> {
  if (fromSeq <= 1) return { hash: GENESIS_HASH, position: START };
  const point = await ledgerPoint(db, fromSeq - 1);
  if (!point) throw new Error(`the ledger has no row at seq ${fromSeq - 1} to start from`);
  return point;
}

/** The first disagreement between ledger row n and the store's event n, if any. */
function compare(
  row: LedgerRow,
  event: RecordedEvent,
  hash: Buffer,
  rows: PagedLookahead<LedgerRow>,
  events: PagedLookahead<RecordedEvent>,
): LedgerFault | undefined {
  if (event.id === row.eventId) {
    if (!hash.equals(row.hash)) {
      // The row's hash is wrong while the next row follows from the true one: the row was edited.
      const nextRow = rows.peek(1);
      const nextEvent = events.peek(1);
      const rowEdited =
        nextRow !== undefined &&
        nextEvent !== undefined &&
        nextRow.eventId === nextEvent.id &&
        chainHash(hash, nextEvent).equals(nextRow.hash);
      return fault(rowEdited ? 'ledger_edited' : 'altered', row, event);
    }
    if (event.position.commit !== row.commit || event.position.prepare !== row.prepare)
      return fault('moved', row, event);
    return undefined;
  }
  if (hash.equals(row.hash)) return fault('ledger_edited', row, event);
  const storeNextIsLedgers = events.peek(1)?.id === row.eventId;
  const ledgerNextIsStores = rows.peek(1)?.eventId === event.id;
  if (storeNextIsLedgers && ledgerNextIsStores) return fault('reordered', row, event);
  if (storeNextIsLedgers) return fault('inserted', row, event);
  if (ledgerNextIsStores) return fault('removed', row);
  return fault('replaced', row, event);
}

function fault(kind: LedgerFaultKind, row: LedgerRow, event?: RecordedEvent): LedgerFault {
  const named = kind === 'inserted' || kind === 'moved' || kind === 'reordered' ? event : undefined;
  return {
    kind,
    seq: row.seq,
    position: named ? formatPosition(named.position) : rowPosition(row),
    eventId: named?.id ?? row.eventId,
  };
}

function faultMessage(f: LedgerFault): string {
  switch (f.kind) {
    case 'altered':
      return `event altered at position ${f.position} (event ${f.eventId}, seq ${f.seq})`;
    case 'removed':
      return `event removed at position ${f.position} (event ${f.eventId}, seq ${f.seq}): the ledger chained it, the store no longer holds it there`;
    case 'inserted':
      return `event inserted at position ${f.position} (event ${f.eventId}, before seq ${f.seq}): the store holds it, the ledger never chained it`;
    case 'reordered':
      return `events reordered at position ${f.position} (event ${f.eventId}, seq ${f.seq}): the store holds the ledger's events ${f.seq} and ${f.seq + 1} the other way round`;
    case 'replaced':
      return `event replaced at position ${f.position} (seq ${f.seq}): the ledger chained event ${f.eventId} there, the store holds another`;
    case 'moved':
      return `event moved to position ${f.position} (event ${f.eventId}, seq ${f.seq}): the ledger chained it at another position`;
    case 'ledger_edited':
      return `ledger row edited at seq ${f.seq} (position ${f.position}${f.eventId ? `, event ${f.eventId}` : ''}): it does not follow from the events`;
  }
}

function verifiedMessage(head: LedgerHead, fromSeq: number, newerEvents: number): string {
  const events =
    fromSeq > 1
      ? `${head.count - fromSeq + 1} events (seq ${fromSeq} to ${head.count})`
      : `${head.count} events`;
  const verified = `ledger verified: ${events}, head ${head.position ?? '-'} ${head.hash.toString('hex')}`;
  return newerEvents > 0 ? `${verified}; ${newerEvents} newer events not yet chained` : verified;
}

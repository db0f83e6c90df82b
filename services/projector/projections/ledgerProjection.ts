import { hash } from 'node:crypto';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { EVENT_FIELD, EVENT_FIELDS, type CopiedEvents } from '#shared/eventStore/postgres/eventsCopy';
import { BinaryCopyReader, BinaryCopyWriter } from '#shared/infra/postgres/binaryCopy';
import type { CopyCatchUp, Projection, ProjectionContext } from '#shared/projections/projection';
import { ChainedBytesWriter } from '#shared/audit/chainedEventBytes';
import { copyIn } from '#shared/audit/copyIn';
import { GENESIS_HASH, chainHash } from '#shared/audit/ledgerChain';

/**
 * The tamper-evident ledger (decisions.md "Audit", shared/audit/ledgerChain.ts): one row per event
 * of the store, in the global order the read models see, each with the chain's hash after it:
 * hash_n = SHA-256(hash_{n-1} ‖ canonical bytes of event n). A follower of its own, beside the
 * audit log: the chain needs nothing but the events and its own head, so it catches up from the
 * events' bytes at the speed of hashing them, while the audit log's rows (payloads, and the event
 * log's seven indexes) cost the database six times as much per event. `seq` numbers the events
 * 1, 2, 3... as the audit log's seq does; the event id and position say which event each link
 * chained, so verify-ledger can name what was altered, removed or inserted.
 */
export const LEDGER_PROJECTION = 'ledger';

export const ledgerProjection: Projection = {
  name: LEDGER_PROJECTION,
  version: 1,
  tables: ['ledger'],
  eventTypes: 'all',

  async createTables({ client, table }) {
    // The columns in the order verify-ledger packs them (ledgerCopyLinks.ts); the primary key is
    // every reader's index (the head, a seq range, a seq).
    await client.query(`
      CREATE TABLE ${table('ledger')} (
        seq              bigint PRIMARY KEY,
        event_id         uuid NOT NULL,
        commit_position  bigint NOT NULL,
        prepare_position bigint NOT NULL,
        hash             bytea NOT NULL
      )`);
  },

  async apply(ctx, events) {
    await appendLinks(ctx, events);
    return [];
  },

  beginCopyCatchUp: async (ctx) => new LedgerCopyCatchUp(await ledgerTip(ctx)),
};

/** The ledger's newest link: its seq and hash (0 and genesis when empty). */
interface LedgerTip {
  readonly seq: number;
  readonly hash: Buffer;
}

async function ledgerTip({ client, table }: ProjectionContext): Promise<LedgerTip> {
  const { rows } = await client.query<{ seq: string; hash: Buffer }>(
    `SELECT seq, hash FROM ${table('ledger')} ORDER BY seq DESC LIMIT 1`,
  );
  const row = rows[0];
  return row ? { seq: Number(row.seq), hash: row.hash } : { seq: 0, hash: GENESIS_HASH };
}

/** A batch's links from the events as the store reads them, in one statement after the tip's. */
async function appendLinks(ctx: ProjectionContext, events: readonly RecordedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const tip = await ledgerTip(ctx);
  const seqs: number[] = [];
  const ids: string[] = [];
  const commits: string[] = [];
  const prepares: string[] = [];
  const hashes: Buffer[] = [];
  let previous = tip.hash;
  events.forEach((event, i) => {
    previous = chainHash(previous, event);
    seqs.push(tip.seq + i + 1);
    ids.push(event.id);
    commits.push(event.position.commit.toString());
    prepares.push(event.position.prepare.toString());
    hashes.push(previous);
  });
  await ctx.client.query(
    `INSERT INTO ${ctx.table('ledger')} (seq, event_id, commit_position, prepare_position, hash)
     SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::bigint[], $4::bigint[], $5::bytea[])`,
    [seqs, ids, commits, prepares, hashes],
  );
}

/** Read once: a module's export read per event costs a getter call where modules are transpiled (tsx). */
const FIELD = EVENT_FIELD;
/** The ledger's columns. */
const LINK_FIELDS = 5;
/** The bytes COPY sends for the rows in one piece. */
const PIECE_BYTES = 64 * 1024;

/**
 * The ledger's catch-up from the events' bytes (Projection.beginCopyCatchUp): each event's canonical
 * bytes written from the payloads' bytes (ChainedBytesWriter, as verify-ledger reads them), one
 * crypto.hash call per event, the links written in binary COPY: byte for byte what apply writes.
 * The chain depends on nothing the database holds but its own tip, read once, so every batch is
 * hashed as soon as it is read (prepare), while the one before is still being written and committed;
 * between two pieces of links the event loop is let go (a batch of 10,000 events is about 50 ms of
 * hashing).
 */
class LedgerCopyCatchUp implements CopyCatchUp {
  private seq: number;
  private readonly previous = Buffer.alloc(32);
  private readonly chained = new ChainedBytesWriter();
  /** Batches' links are computed one after another, in order: each goes on from the chain's state. */
  private computing: Promise<unknown> = Promise.resolve();
  /** Links computed ahead, by batch. */
  private readonly prepared = new Map<CopiedEvents, Promise<Buffer[]>>();

  constructor(tip: LedgerTip) {
    this.seq = tip.seq;
    tip.hash.copy(this.previous);
  }

  prepare(events: CopiedEvents): void {
    const links = this.compute(events);
    links.catch(() => undefined); // awaited by apply, or dropped with the session when a batch fails
    this.prepared.set(events, links);
  }

  async apply({ client, table }: ProjectionContext, events: CopiedEvents): Promise<readonly string[]> {
    const pieces = await (this.prepared.get(events) ?? this.compute(events));
    this.prepared.delete(events);
    const copy = copyIn(
      client,
      `COPY ${table('ledger')} (seq, event_id, commit_position, prepare_position, hash) FROM STDIN (FORMAT binary)`,
    );
    for (const piece of pieces) copy.write(piece);
    await copy.end();
    return [];
  }

  /** The batch's links, once the batches before it are computed. */
  private compute(events: CopiedEvents): Promise<Buffer[]> {
    const links = this.computing.then(() => this.links(events));
    this.computing = links.catch(() => undefined);
    return links;
  }

  private async links(events: CopiedEvents): Promise<Buffer[]> {
    const rows = new BinaryCopyWriter(PIECE_BYTES);
    const pieces: Buffer[] = [];
    const reader = new BinaryCopyReader(EVENT_FIELDS);
    const { starts, ends } = reader;
    const { chained, previous } = this;
    reader.push(events.bytes);
    while (reader.next()) {
      const { buffer } = reader;
      // One call, no Hash object; the digest as a one-byte-per-character string, the next one's input.
      const digest = hash('sha256', chained.write(previous, buffer, starts, ends), 'binary');
      previous.write(digest, 0, 'latin1');
      rows.tuple(LINK_FIELDS);
      rows.int8(++this.seq);
      rows.bytes(buffer, starts[FIELD.Id]!, ends[FIELD.Id]!);
      rows.bytes(buffer, starts[FIELD.Commit]!, ends[FIELD.Commit]!);
      rows.bytes(buffer, starts[FIELD.Prepare]!, ends[FIELD.Prepare]!);
      rows.binaryString(digest);
      if (rows.full) {
        pieces.push(rows.take());
        // Lets requests, the next batch's read and the batch before's commit go on meanwhile.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    reader.finish();
    pieces.push(rows.end());
    return pieces;
  }
}

import { isInternalEvent } from '#shared/audit/auditedEvent';
import { copyIn } from '#shared/audit/copyIn';
import { EVENT_FIELDS, type CopiedEvents } from '#shared/eventStore/postgres/eventsCopy';
import { BinaryCopyReader, BinaryCopyWriter } from '#shared/infra/postgres/binaryCopy';
import type { CopyCatchUp, ProjectionContext } from '#shared/projections/projection';
import { AuditRowWriter, type EventFacts, factsOf } from './auditRowWriter';
import { AUDIT_COLUMNS, type AuditHead, auditHead, lastRevisions } from './auditLogTables';
import { ResourceRevisions } from './resourceRevisions';

/**
 * Past this many resources remembered, a catch-up looks their revisions up by batch, as apply does.
 * About 100 bytes each.
 */
export const MAX_REMEMBERED_RESOURCES = 2_000_000;

/**
 * The audit log's catch-up from the events' bytes (Projection.beginCopyCatchUp): each batch's rows
 * written in binary COPY by AuditRowWriter, apply's byte for byte, computed while the batch before
 * is still being written and committed.
 *
 * From empty tables the session numbers revisions from memory (every resource's last revision: it
 * wrote them all) instead of looking them up batch by batch; resumed half-way, or past
 * `maxRemembered` resources, it looks them up as apply does. (Dropping the indexes to build them
 * at the end instead cost as much CPU, and left it all to the end, when nothing else runs.)
 */
export async function beginAuditCopyCatchUp(
  ctx: ProjectionContext,
  { maxRemembered = MAX_REMEMBERED_RESOURCES }: { maxRemembered?: number } = {},
): Promise<CopyCatchUp> {
  const head = await auditHead(ctx);
  return new AuditCopyCatchUp(head, head.seq === 0, maxRemembered);
}

/** The bytes COPY sends for the rows in one piece. */
const PIECE_BYTES = 64 * 1024;

/**
 * audit_references' rows in binary COPY, by ref and then seq (undefined: none): a ref's rows go
 * into its key's index one after another, where the order of the events scattered them (about a
 * fifth less of the server's time for the rows).
 */
function referenceRows(references: ReadonlyMap<string, readonly number[]>): Buffer | undefined {
  if (references.size === 0) return undefined;
  const rows = new BinaryCopyWriter(PIECE_BYTES);
  for (const ref of [...references.keys()].sort())
    for (const seq of references.get(ref)!) {
      rows.tuple(2);
      rows.text(ref);
      rows.int8(seq);
    }
  return rows.end();
}

/** A batch's rows in binary COPY: audit_events' pieces, and audit_references' (none: no reference). */
interface BatchRows {
  readonly pieces: Buffer[];
  readonly references: Buffer | undefined;
}

class AuditCopyCatchUp implements CopyCatchUp {
  private readonly writer: AuditRowWriter;
  /** Last public revisions: of every resource while `complete`, else of this batch's. */
  private revisions = new ResourceRevisions();
  /** Batches' rows are computed one after another, in order: each goes on from the chain's state. */
  private computing: Promise<unknown> = Promise.resolve();
  /** Rows computed ahead, by batch (the runner may read and announce the next before applying this one). */
  private readonly prepared = new Map<CopiedEvents, Promise<BatchRows>>();

  constructor(
    head: AuditHead,
    private complete: boolean,
    private readonly maxRemembered: number,
  ) {
    this.writer = new AuditRowWriter(head);
  }

  /**
   * Computes the batch's rows now, while the batch before is still being committed, when they depend
   * on nothing the database holds (every resource remembered); look-ups wait for apply.
   */
  prepare(events: CopiedEvents): void {
    if (!this.stillComplete()) return;
    const rows = this.compute(events, undefined, undefined);
    rows.catch(() => undefined); // awaited by apply, or dropped with the session when a batch fails
    this.prepared.set(events, rows);
  }

  async apply(ctx: ProjectionContext, events: CopiedEvents): Promise<readonly string[]> {
    const prepared = this.prepared.get(events);
    this.prepared.delete(events);
    // Look-ups first: the connection takes no other statement once the COPY has begun.
    const looked = prepared || this.stillComplete() ? undefined : await this.lookUpRevisions(ctx, events);
    const { client, table } = ctx;
    const copy = copyIn(
      client,
      `COPY ${table('audit_events')} (${AUDIT_COLUMNS}) FROM STDIN (FORMAT binary)`,
    );
    let rows: BatchRows;
    if (prepared) {
      rows = await prepared;
      for (const piece of rows.pieces) copy.write(piece);
    } else rows = await this.compute(events, looked, (piece) => copy.write(piece));
    await copy.end();
    if (rows.references) {
      const copyRefs = copyIn(
        client,
        `COPY ${table('audit_references')} (ref, seq) FROM STDIN (FORMAT binary)`,
      );
      copyRefs.write(rows.references);
      await copyRefs.end();
    }
    return [];
  }

  /** False once past maxRemembered resources: from then on, revisions are looked up. */
  private stillComplete(): boolean {
    if (this.complete && this.revisions.size > this.maxRemembered) this.complete = false;
    return this.complete;
  }

  /** The batch's rows, once the batches before it are computed; each piece to `send` as it fills, if given. */
  private compute(
    events: CopiedEvents,
    looked: readonly EventFacts[] | undefined,
    send: ((piece: Buffer) => void) | undefined,
  ): Promise<BatchRows> {
    const rows = this.computing.then(() => this.rows(events, looked, send));
    this.computing = rows.catch(() => undefined);
    return rows;
  }

  private async rows(
    events: CopiedEvents,
    looked: readonly EventFacts[] | undefined,
    send: ((piece: Buffer) => void) | undefined,
  ): Promise<BatchRows> {
    const rows = new BinaryCopyWriter(PIECE_BYTES);
    /** The batch's references: seqs by ref. */
    const references = new Map<string, number[]>();
    const pieces: Buffer[] = [];
    const out = send ?? ((piece: Buffer) => void pieces.push(piece));
    const reader = new BinaryCopyReader(EVENT_FIELDS);
    reader.push(events.bytes);
    for (let i = 0; reader.next(); i++) {
      const facts = looked?.[i] ?? factsOf(reader);
      const eventRefs = this.writer.write(rows, reader, facts, this.revisions);
      for (const ref of eventRefs) {
        const seqs = references.get(ref);
        if (seqs) seqs.push(this.writer.seq);
        else references.set(ref, [this.writer.seq]);
      }
      if (rows.full) {
        out(rows.take());
        // Lets pieces go out, the next batch's events come in and the batch before commit meanwhile.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    reader.finish();
    out(rows.end());
    return { pieces, references: referenceRows(references) };
  }

  /** Each event's facts, the last revisions of their resources looked up (when not all remembered). */
  private async lookUpRevisions(ctx: ProjectionContext, events: CopiedEvents): Promise<EventFacts[]> {
    const facts: EventFacts[] = [];
    const reader = new BinaryCopyReader(EVENT_FIELDS);
    reader.push(events.bytes);
    const keys = new Set<string>();
    while (reader.next()) {
      const event = factsOf(reader);
      facts.push(event);
      if (event.resource && !isInternalEvent(event.type))
        keys.add(`${event.resource.type}:${event.resource.id}`);
    }
    this.revisions = new ResourceRevisions();
    for (const [key, revision] of await lastRevisions(ctx, [...keys])) {
      const colon = key.indexOf(':');
      this.revisions.set(key.slice(0, colon), key.slice(colon + 1), revision);
    }
    return facts;
  }
}

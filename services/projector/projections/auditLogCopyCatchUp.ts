import { hash } from 'node:crypto';
import type { AuditResource } from '#shared/audit/auditedEvent';
import {
  RESOURCE_IN_PAYLOAD,
  actorIdOf,
  isInternalEvent,
  redactedData,
  referencesOfEvent,
  resourceOfEvent,
  resourceOfStream,
} from '#shared/audit/auditedEvent';
import { AuditedEventBytes, auditText } from '#shared/audit/auditedEventBytes';
import { ChainedBytesWriter } from '#shared/audit/chainedEventBytes';
import { copyIn } from '#shared/audit/copyIn';
import {
  EVENT_FIELD,
  EVENT_FIELDS,
  type CopiedEvents,
  jsonTextStart,
} from '#shared/eventStore/postgres/eventsCopy';
import { BinaryCopyReader, BinaryCopyWriter, int64At } from '#shared/infra/postgres/binaryCopy';
import type { CopyCatchUp, ProjectionContext } from '#shared/projections/projection';
import { AUDIT_COLUMNS, chainHead, lastRevisions } from './auditLogTables';
import { ResourceRevisions } from './resourceRevisions';

/**
 * Past this many resources remembered, a catch-up looks their revisions up by batch, as apply does.
 * About 100 bytes each.
 */
export const MAX_REMEMBERED_RESOURCES = 2_000_000;

/**
 * The audit log's catch-up from the events' bytes (Projection.beginCopyCatchUp): per event, the
 * chain's hash from its canonical bytes (ChainedBytesWriter, one crypto.hash call), its row written
 * in binary COPY with its payload passed on as those canonical bytes when nothing in it is to be
 * removed (AuditedEventBytes), and parsed as apply parses it otherwise. The rows are apply's, byte
 * for byte.
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
  const head = await chainHead(ctx);
  return new AuditCopyCatchUp(head.seq, head.hash, head.hwm.getTime(), head.seq === 0, maxRemembered);
}

/** Read once: a module's export read per event costs a getter call where modules are transpiled (tsx). */
const FIELD = EVENT_FIELD;
/** The event log's COPY of one batch: 17 fields a row. */
const AUDIT_FIELDS = 17;
/** The bytes COPY sends for the row in one piece. */
const PIECE_BYTES = 64 * 1024;

/** A batch's rows in binary COPY: audit_events' pieces, and audit_references' (none: no reference). */
interface BatchRows {
  readonly pieces: Buffer[];
  readonly references: Buffer | undefined;
}

class AuditCopyCatchUp implements CopyCatchUp {
  private readonly previous = Buffer.alloc(32);
  private readonly chained = new ChainedBytesWriter();
  private readonly audited = new AuditedEventBytes();
  /** Last public revisions: of every resource while `complete`, else of this batch's. */
  private revisions = new ResourceRevisions();
  /** Batches' rows are computed one after another, in order: each goes on from the chain's state. */
  private computing: Promise<unknown> = Promise.resolve();
  /** Rows computed ahead, by batch (the runner may read and announce the next before applying this one). */
  private readonly prepared = new Map<CopiedEvents, Promise<BatchRows>>();

  constructor(
    private seq: number,
    previous: Buffer,
    private hwmMs: number,
    private complete: boolean,
    private readonly maxRemembered: number,
  ) {
    previous.copy(this.previous);
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
    const refs = new BinaryCopyWriter(PIECE_BYTES);
    const pieces: Buffer[] = [];
    const out = send ?? ((piece: Buffer) => void pieces.push(piece));
    let refCount = 0;
    const reader = new BinaryCopyReader(EVENT_FIELDS);
    reader.push(events.bytes);
    for (let i = 0; reader.next(); i++) {
      const seq = ++this.seq;
      const eventRefs = this.writeRow(rows, reader, seq, looked?.[i] ?? factsOf(reader));
      for (const ref of eventRefs) {
        refs.tuple(2);
        refs.text(ref);
        refs.int8(seq);
        refCount++;
      }
      if (rows.full) {
        out(rows.take());
        // Lets pieces go out, the next batch's events come in and the batch before commit meanwhile.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    reader.finish();
    out(rows.end());
    return { pieces, references: refCount > 0 ? refs.end() : undefined };
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

  /** Writes the event the reader holds as audit_events row `seq`; returns its references. */
  private writeRow(
    rows: BinaryCopyWriter,
    reader: BinaryCopyReader,
    seq: number,
    { type, resource, data: parsedData }: EventFacts,
  ): readonly string[] {
    const { buffer, starts, ends } = reader;
    const { chained, audited, previous } = this;
    // One call, no Hash object; the digest as a one-byte-per-character string, the next one's input.
    const digest = hash('sha256', chained.write(previous, buffer, starts, ends), 'binary');
    previous.write(digest, 0, 'latin1');
    const recordedAtMs = chained.recordedAtMs;
    if (recordedAtMs > this.hwmMs) this.hwmMs = recordedAtMs;
    const sink = chained.sink.buffer;
    const internal = isInternalEvent(type);

    rows.tuple(AUDIT_FIELDS);
    rows.int8(seq);
    rows.bytes(buffer, starts[FIELD.Commit]!, ends[FIELD.Commit]!);
    rows.bytes(buffer, starts[FIELD.Prepare]!, ends[FIELD.Prepare]!);
    rows.bytes(buffer, starts[FIELD.Id]!, ends[FIELD.Id]!);
    rows.bytes(buffer, starts[FIELD.Type]!, ends[FIELD.Type]!);
    rows.bytes(buffer, starts[FIELD.Stream]!, ends[FIELD.Stream]!);
    rows.bytes(buffer, starts[FIELD.Revision]!, ends[FIELD.Revision]!);
    if (resource) {
      rows.text(resource.type);
      rows.text(resource.id);
      rows.int8(
        internal ? int64At(buffer, starts[FIELD.Revision]!) : this.revisions.next(resource.type, resource.id),
      );
    } else {
      rows.null();
      rows.null();
      rows.null();
    }
    rows.bool(internal);
    rows.timestampMs(recordedAtMs);
    rows.timestampMs(this.hwmMs);
    const metadataStart = jsonTextStart(buffer, starts[FIELD.Metadata]!);
    this.writeMetadataFields(rows, buffer, metadataStart, ends[FIELD.Metadata]!, sink);
    const refs = audited.references(type, sink, chained.dataStart, chained.dataEnd, resource);
    if (refs) rows.jsonb(sink, chained.dataStart, chained.dataEnd);
    const data: unknown =
      refs || parsedData !== undefined
        ? parsedData
        : JSON.parse(buffer.toString('utf8', jsonTextStart(buffer, starts[FIELD.Data]!), ends[FIELD.Data]));
    if (!refs) rows.jsonbText(JSON.stringify(redactedData(type, data)));
    rows.binaryString(digest);
    if (refs) return refs;
    const streamName = buffer.toString('utf8', starts[FIELD.Stream], ends[FIELD.Stream]);
    return referencesOfEvent({ type, data, streamName });
  }

  /** actor_id and request_id, from the canonical metadata when it is an object, else as apply reads them. */
  private writeMetadataFields(
    rows: BinaryCopyWriter,
    buffer: Buffer,
    start: number,
    end: number,
    sink: Buffer,
  ): void {
    const { audited, chained } = this;
    let actorId: number | null;
    let requestId: string | null;
    if (audited.readMetadata(sink, chained.metadataStart, chained.metadataEnd)) {
      actorId = audited.actorId;
      if (audited.requestIdStart >= 0) {
        if (actorId === null) rows.null();
        else rows.int4(actorId);
        rows.bytes(sink, audited.requestIdStart, audited.requestIdEnd);
        return;
      }
      requestId = audited.requestIdText;
    } else {
      // Not an object: what readAll's spread makes of it.
      const metadata = { ...(JSON.parse(buffer.toString('utf8', start, end)) as object) } as Record<
        string,
        unknown
      >;
      actorId = actorIdOf(String(metadata.actor));
      requestId = auditText(metadata.requestId);
    }
    if (actorId === null) rows.null();
    else rows.int4(actorId);
    if (requestId === null) rows.null();
    else rows.text(requestId);
  }
}

/** What the row of an event takes from its type and stream, or from its payload for some types. */
interface EventFacts {
  readonly type: string;
  readonly resource: AuditResource | null;
  /** The payload, when it was parsed to find the resource. */
  readonly data: unknown;
}

/** The facts of the event the reader holds. */
function factsOf(reader: BinaryCopyReader): EventFacts {
  const { buffer, starts, ends } = reader;
  const type = buffer.toString('utf8', starts[FIELD.Type], ends[FIELD.Type]);
  const streamName = buffer.toString('utf8', starts[FIELD.Stream], ends[FIELD.Stream]);
  if (!RESOURCE_IN_PAYLOAD.has(type))
    return { type, resource: resourceOfStream(streamName) ?? null, data: undefined };
  const data: unknown = JSON.parse(
    buffer.toString('utf8', jsonTextStart(buffer, starts[FIELD.Data]!), ends[FIELD.Data]),
  );
  return { type, resource: resourceOfEvent({ type, data, streamName }), data };
}

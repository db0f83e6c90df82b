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

class AuditCopyCatchUp implements CopyCatchUp {
  private readonly previous = Buffer.alloc(32);
  private readonly chained = new ChainedBytesWriter();
  private readonly audited = new AuditedEventBytes();
  /** Last public revisions: of every resource while `complete`, else of this batch's. */
  private revisions = new ResourceRevisions();

  constructor(
    private seq: number,
    previous: Buffer,
    private hwmMs: number,
    private complete: boolean,
    private readonly maxRemembered: number,
  ) {
    previous.copy(this.previous);
  }

  async apply(ctx: ProjectionContext, events: CopiedEvents): Promise<readonly string[]> {
    if (this.complete && this.revisions.size > this.maxRemembered) this.complete = false;
    const batch = await this.resources(ctx, events);
    const { client, table } = ctx;
    const copy = copyIn(
      client,
      `COPY ${table('audit_events')} (${AUDIT_COLUMNS}) FROM STDIN (FORMAT binary)`,
    );
    const rows = new BinaryCopyWriter(PIECE_BYTES);
    const refs = new BinaryCopyWriter(PIECE_BYTES);
    let refCount = 0;
    const reader = new BinaryCopyReader(EVENT_FIELDS);
    reader.push(events.bytes);
    for (let i = 0; reader.next(); i++) {
      const seq = ++this.seq;
      const eventRefs = this.writeRow(
        rows,
        reader,
        seq,
        batch.types[i]!,
        batch.resources[i] ?? null,
        batch.parsed[i],
      );
      for (const ref of eventRefs) {
        refs.tuple(2);
        refs.text(ref);
        refs.int8(seq);
        refCount++;
      }
      if (rows.full) copy.write(rows.take());
    }
    reader.finish();
    copy.write(rows.end());
    await copy.end();
    if (refCount > 0) {
      const copyRefs = copyIn(
        client,
        `COPY ${table('audit_references')} (ref, seq) FROM STDIN (FORMAT binary)`,
      );
      copyRefs.write(refs.end());
      await copyRefs.end();
    }
    return [];
  }

  /**
   * Each event's type and resource (some read from the parsed payload, kept for the row), and the
   * resources' last revisions looked up when they are not all remembered.
   */
  private async resources(ctx: ProjectionContext, events: CopiedEvents): Promise<BatchResources> {
    const types: string[] = [];
    const resources: (AuditResource | null)[] = [];
    const parsed: unknown[] = [];
    const reader = new BinaryCopyReader(EVENT_FIELDS);
    reader.push(events.bytes);
    const { buffer, starts, ends } = reader;
    const missing = new Set<string>();
    for (let i = 0; reader.next(); i++) {
      const type = reader.buffer.toString('utf8', starts[FIELD.Type], ends[FIELD.Type]);
      const streamName = reader.buffer.toString('utf8', starts[FIELD.Stream], ends[FIELD.Stream]);
      let resource: AuditResource | null;
      if (RESOURCE_IN_PAYLOAD.has(type)) {
        const data: unknown = JSON.parse(
          buffer.toString('utf8', jsonTextStart(buffer, starts[FIELD.Data]!), ends[FIELD.Data]),
        );
        parsed[i] = data;
        resource = resourceOfEvent({ type, data, streamName });
      } else resource = resourceOfStream(streamName) ?? null;
      types.push(type);
      resources.push(resource);
      if (!this.complete && resource && !isInternalEvent(type))
        missing.add(`${resource.type}:${resource.id}`);
    }
    if (!this.complete) {
      this.revisions = new ResourceRevisions();
      for (const [key, revision] of await lastRevisions(ctx, [...missing])) {
        const colon = key.indexOf(':');
        this.revisions.set(key.slice(0, colon), key.slice(colon + 1), revision);
      }
    }
    return { types, resources, parsed };
  }

  /** Writes the event the reader holds as audit_events row `seq`; returns its references. */
  private writeRow(
    rows: BinaryCopyWriter,
    reader: BinaryCopyReader,
    seq: number,
    type: string,
    resource: AuditResource | null,
    parsedData: unknown,
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

interface BatchResources {
  readonly types: readonly string[];
  readonly resources: readonly (AuditResource | null)[];
  /** The payloads parsed to find their resource, by index in the batch. */
  readonly parsed: readonly unknown[];
}

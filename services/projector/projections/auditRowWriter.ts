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
import { EVENT_FIELD, jsonTextStart } from '#shared/eventStore/postgres/eventsCopy';
import { type BinaryCopyReader, type BinaryCopyWriter, int64At } from '#shared/infra/postgres/binaryCopy';
import { GENESIS_HASH } from '#shared/audit/ledgerChain';
import type { AuditHead } from './auditLogTables';
import type { ResourceRevisions } from './resourceRevisions';

/** Read once: a module's export read per event costs a getter call where modules are transpiled (tsx). */
const FIELD = EVENT_FIELD;
/** audit_events' columns (AUDIT_COLUMNS). */
const AUDIT_FIELDS = 16;

/**
 * The audit log's row of each event read as a binary COPY tuple (eventsCopy.ts), written in binary
 * COPY, byte for byte the row apply writes for the same event: its canonical bytes written from the
 * payloads' bytes (ChainedBytesWriter, as the ledger writes them), the payload passed on as those
 * canonical bytes when nothing in it is to be removed (AuditedEventBytes), and parsed as apply
 * parses it otherwise. Goes on from the log's head, event after event.
 */
export class AuditRowWriter {
  /** The last row's seq. */
  seq: number;
  private hwmMs: number;
  private readonly chained = new ChainedBytesWriter();
  private readonly audited = new AuditedEventBytes();

  constructor(head: AuditHead) {
    this.seq = head.seq;
    this.hwmMs = head.hwm.getTime();
  }

  /** Writes the row of the event the reader holds; returns its references. */
  write(
    rows: BinaryCopyWriter,
    reader: BinaryCopyReader,
    { type, resource, data: parsedData }: EventFacts,
    revisions: ResourceRevisions,
  ): readonly string[] {
    const { buffer, starts, ends } = reader;
    const { chained, audited } = this;
    const seq = ++this.seq;
    // The canonical data and metadata, in the bytes the ledger hashes (no previous hash to chain here).
    chained.write(GENESIS_HASH, buffer, starts, ends);
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
        internal ? int64At(buffer, starts[FIELD.Revision]!) : revisions.next(resource.type, resource.id),
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
export interface EventFacts {
  readonly type: string;
  readonly resource: AuditResource | null;
  /** The payload, when it was parsed to find the resource. */
  readonly data: unknown;
}

/** The facts of the event the reader holds. */
export function factsOf(reader: BinaryCopyReader): EventFacts {
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

/**
 * The tamper-evident ledger: every event in global order, chained.
 *   hash_n = SHA-256(hash_{n-1} ‖ canonical bytes of event n), hash_0 = 32 zero bytes.
 * The canonical bytes are the RFC 8785 (JSON Canonicalization Scheme) form of the event as the store
 * holds it: id, type, stream, revision, data and metadata (actor, request and correlation ids,
 * schema version, recorded time). The global position is left out on purpose: it is an artefact
 * of the store (a transaction id on PostgreSQL), while the chain itself fixes the order. What is
 * chained is what is stored, so a later crypto-shredding (which keeps the stored ciphertext) keeps
 * the chain valid.
 */
import { createHash } from 'node:crypto';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { canonicalJson } from './ledgerCanonicalJson';

export const LEDGER_ALGORITHM = 'sha256';
export const GENESIS_HASH: Buffer = Buffer.alloc(32);

export type ChainedEvent = Pick<
  RecordedEvent,
  'id' | 'type' | 'streamName' | 'streamRevision' | 'data' | 'metadata'
>;

/** The bytes of one event that the chain covers. */
export function canonicalEventBytes(event: ChainedEvent): Buffer {
  return Buffer.from(canonicalEventText(event), 'utf8');
}

/**
 * The text of those bytes: canonicalJson of {id, type, stream, revision, data, metadata}, the outer
 * object written here in its canonical member order (data, id, metadata, revision, stream, type)
 * rather than copied and sorted for every event: the same text (a unit test holds the two together).
 */
export function canonicalEventText(event: ChainedEvent): string {
  const { id, type, streamName } = event;
  const data = canonicalJson(event.data);
  const metadata = canonicalJson(event.metadata);
  let text = data === undefined ? '{' : `{"data":${data},`;
  text += `"id":${JSON.stringify(id)},`;
  if (metadata !== undefined) text += `"metadata":${metadata},`;
  return `${text}"revision":"${event.streamRevision.toString()}","stream":${JSON.stringify(streamName)},"type":${JSON.stringify(type)}}`;
}

/** The chain's hash after `event`, given the hash before it. */
export function chainHash(previous: Buffer, event: ChainedEvent): Buffer {
  return createHash('sha256').update(previous).update(canonicalEventText(event), 'utf8').digest();
}

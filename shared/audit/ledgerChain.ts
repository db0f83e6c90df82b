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
  const text = canonicalJson({
    id: event.id,
    type: event.type,
    stream: event.streamName,
    revision: event.streamRevision.toString(),
    data: event.data,
    metadata: event.metadata,
  });
  if (text === undefined) throw new Error(`event ${event.id} cannot be canonicalised`);
  return Buffer.from(text, 'utf8');
}

/** The chain's hash after `event`, given the hash before it. */
export function chainHash(previous: Buffer, event: ChainedEvent): Buffer {
  return createHash('sha256').update(previous).update(canonicalEventBytes(event)).digest();
}

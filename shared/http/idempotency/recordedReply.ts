import { timingSafeEqual } from 'node:crypto';
import { formatPosition, parsePosition } from '#shared/eventStore/eventStore';
import type { Reply } from '#shared/http/routeSpec';
import { IDEMPOTENT_REPLAYED_HEADER } from './idempotencyKey';
import { IdempotencyKeyReusedError } from './idempotencyErrors';
import type { CompletedRecord, StoredRecord } from './idempotencyRecords';
import { openResponse, sealResponse, type RecordKeys } from './recordKeys';
import { requestFingerprint, type RequestIdentity } from './requestFingerprint';

interface SealedPart {
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}

/** What is stored of a reply: status and position in the clear, headers and body sealed. */
export function recordOf(keys: RecordKeys, fingerprint: Buffer, reply: Reply): CompletedRecord {
  if (reply.raw) throw new Error('a write that streams its response cannot be recorded for replays');
  const sealed: SealedPart = { headers: reply.headers ?? {}, body: reply.body };
  return {
    fingerprint,
    status: reply.status,
    response: sealResponse(keys, Buffer.from(JSON.stringify(sealed), 'utf8')),
    position: reply.position ? formatPosition(reply.position) : null,
  };
}

/**
 * The recorded reply, when this request is the one that was recorded (same method, path and body);
 * otherwise 422. It carries the original position, so the read-your-writes wait still applies.
 */
export async function replayOf(
  keys: RecordKeys,
  record: StoredRecord,
  request: RequestIdentity,
): Promise<Reply> {
  const fingerprint = await requestFingerprint(keys, request);
  if (!record.fingerprint || !timingSafeEqual(record.fingerprint, fingerprint))
    throw new IdempotencyKeyReusedError();
  if (record.status === null || record.response === null)
    throw new Error('an idempotency record without a response cannot be replayed');
  const { headers, body } = JSON.parse(openResponse(keys, record.response).toString('utf8')) as SealedPart;
  return {
    status: record.status,
    body,
    headers: { ...headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
    position: record.position === null ? undefined : parsePosition(record.position),
  };
}

import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Everything about a record is derived from the caller's Idempotency-Key and scope, and the key
 * itself is never stored: rows are found by a hash, responses (which can hold secrets: a new token's
 * plaintext) are sealed with AES-256-GCM under a key derived (HKDF) from the Idempotency-Key, and
 * request fingerprints are keyed hashes (a body can hold a password). The table alone reveals
 * nothing, as long as keys are hard to guess (clients should send random UUIDs).
 */
export interface RecordKeys {
  /** Primary key of the record: sha256("<scope>:<key>"). */
  readonly lookup: Buffer;
  /** Advisory lock that serialises requests carrying this key. */
  readonly lockId: bigint;
  readonly cipherKey: Buffer;
  readonly fingerprintKey: Buffer;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

function derive(key: string, scope: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, scope, `idempotency/${purpose}`, 32));
}

export function deriveRecordKeys(scope: string, key: string): RecordKeys {
  const lookup = createHash('sha256').update(`${scope}:${key}`).digest();
  return {
    lookup,
    lockId: lookup.readBigInt64BE(0),
    cipherKey: derive(key, scope, 'response'),
    fingerprintKey: derive(key, scope, 'fingerprint'),
  };
}

/** nonce || tag || ciphertext; the lookup hash is authenticated too, so a sealed response cannot move rows. */
export function sealResponse(keys: RecordKeys, plaintext: Buffer): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.cipherKey, nonce).setAAD(keys.lookup);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, cipher.getAuthTag(), ciphertext]);
}

/** Throws when the sealed bytes were not made with these keys, or were altered. */
export function openResponse(keys: RecordKeys, sealed: Buffer): Buffer {
  const nonce = sealed.subarray(0, NONCE_BYTES);
  const tag = sealed.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', keys.cipherKey, nonce).setAAD(keys.lookup);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
}

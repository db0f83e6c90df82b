import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TokenKind } from '#shared/domain/accounts/events';

/**
 * Token secrets carry a recognisable prefix (so they can be told apart, and found by secret
 * scanners) followed by 40 base62 characters (~238 bits). Only the SHA-256 of a secret is stored:
 * a fast hash is right here because the secret is random, not a human password.
 */
const PREFIX: Record<TokenKind, string> = { login: 'bic_lt_', personal: 'bic_pat_' };
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_PATTERN = /^bic_(lt|pat)_[0-9A-Za-z]{40}$/;

export function generateTokenSecret(kind: TokenKind): string {
  const bytes = randomBytes(64);
  let out = '';
  for (const byte of bytes) {
    if (byte >= 248) continue; // 248 = 62 * 4: rejection keeps the characters uniform
    out += ALPHABET[byte % 62];
    if (out.length === 40) break;
  }
  return out.length === 40 ? PREFIX[kind] + out : generateTokenSecret(kind);
}

export function looksLikeTokenSecret(secret: string): boolean {
  return SECRET_PATTERN.test(secret);
}

export function hashTokenSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

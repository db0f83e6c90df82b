import type { Request } from 'express';
import { BadRequestError } from '#shared/errors/httpErrors';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set on a response that repeats a recorded one instead of executing the request again. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key: undefined when absent; 400 unless 1–255 printable ASCII characters. */
export function readIdempotencyKey(req: Request): string | undefined {
  const value = req.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !VALID_KEY.test(value))
    throw new BadRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters.');
  return value;
}

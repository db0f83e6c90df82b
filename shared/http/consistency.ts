import type { Request } from 'express';
import { BadRequestError } from '#shared/errors/httpErrors';
import { type GlobalPosition, parsePosition } from '#shared/eventStore/eventStore';

/** Read-your-writes tokens a client may send on reads: the X-Event-Position of its last write. */
export const MIN_POSITION_HEADERS = ['x-min-position', 'x-consistency-token'] as const;

export function requestedMinPosition(req: Request): GlobalPosition | undefined {
  for (const name of MIN_POSITION_HEADERS) {
    const value = req.headers[name];
    if (typeof value !== 'string' || value === '') continue;
    const position = parsePosition(value);
    if (!position)
      throw new BadRequestError(
        `Invalid ${name === 'x-min-position' ? 'X-Min-Position' : 'X-Consistency-Token'} header.`,
      );
    return position;
  }
  return undefined;
}

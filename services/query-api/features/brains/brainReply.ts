import type { Reply } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { representationEtag } from '#shared/http/etag';
import { type BrainShape, type BrainView, brainJson } from '#shared/views/brainViews';
import type { BrainSqlRow } from './brainSql';

/**
 * One brain in the asked shape, with its weak ETag (the stream revision, for If-Match, and a digest of
 * the body, for If-None-Match: processing changes the body, not the brain's stream); 404 when none.
 */
export function brainReply(row: BrainSqlRow | undefined, shape: BrainShape, view: BrainView): Reply {
  if (!row) throw new NotFoundError();
  const body = brainJson(shape, row, view);
  return { status: 200, body, headers: { ETag: representationEtag(BigInt(row.revision), body) } };
}

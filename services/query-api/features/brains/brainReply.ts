import type { Reply } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { weakEtag } from '#shared/http/etag';
import { type BrainShape, type BrainView, brainJson } from '#shared/views/brainViews';
import type { BrainSqlRow } from './brainSql';

/** One brain in the asked shape, with its weak ETag (the stream revision, for If-Match); 404 when none. */
export function brainReply(row: BrainSqlRow | undefined, shape: BrainShape, view: BrainView): Reply {
  if (!row) throw new NotFoundError();
  return {
    status: 200,
    body: brainJson(shape, row, view),
    headers: { ETag: weakEtag(BigInt(row.revision)) },
  };
}

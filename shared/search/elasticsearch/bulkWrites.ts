import type { Client, estypes } from '@elastic/elasticsearch';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { BrainSearchDocument } from '#shared/search/searchIndex';

/** A document version, or a tombstone (document null), at the position of the event behind it. */
export interface SearchWrite {
  readonly brainId: number;
  readonly document: BrainSearchDocument | null;
  readonly position: GlobalPosition;
}

/**
 * Keeps whichever version has the later position, compared lexicographically on (commit, prepare)
 * in the document's own update, so replays, duplicates and out-of-order retries never go
 * backwards. External versioning would do this for one number; a position is two, and a deleted
 * document's version is forgotten after index.gc_deletes, so a removal is a tombstone instead.
 */
const KEEP_LATEST = `
boolean stale = false;
if (ctx._source.position != null) {
  long storedCommit = Long.parseLong(ctx._source.position.commit);
  long storedPrepare = Long.parseLong(ctx._source.position.prepare);
  long commit = Long.parseLong(params.doc.position.commit);
  long prepare = Long.parseLong(params.doc.position.prepare);
  stale = storedCommit > commit || (storedCommit == commit && storedPrepare >= prepare);
}
if (stale) { ctx.op = 'noop'; } else { ctx._source.clear(); ctx._source.putAll(params.doc); }
`;

function source(write: SearchWrite): Record<string, unknown> {
  const position = { commit: write.position.commit.toString(), prepare: write.position.prepare.toString() };
  if (!write.document) return { brainId: write.brainId, removed: true, position };
  return {
    ...write.document,
    dateUploaded: write.document.dateUploaded.toISOString(),
    embargoUntil: write.document.embargoUntil?.toISOString() ?? null,
    readers: [...write.document.readers],
    removed: false,
    position,
  };
}

export class BulkWriteError extends Error {
  constructor(readonly failures: readonly estypes.BulkResponseItem[]) {
    const first = failures[0]?.error;
    super(
      `search index: ${failures.length} bulk writes failed (first: ${first?.type ?? '?'}: ${first?.reason ?? ''})`,
    );
    this.name = 'BulkWriteError';
  }
}

/** One bulk request of scripted upserts (at most one write per brain); any failed item throws. */
export async function bulkWrite(
  client: Client,
  index: string,
  writes: readonly SearchWrite[],
  refresh: estypes.Refresh,
): Promise<void> {
  if (writes.length === 0) return;
  const operations = writes.flatMap((write) => [
    { update: { _index: index, _id: String(write.brainId), retry_on_conflict: 5 } },
    {
      script: { source: KEEP_LATEST, lang: 'painless', params: { doc: source(write) } },
      scripted_upsert: true,
      upsert: {},
    },
  ]);
  const response = await client.bulk({ operations, refresh });
  if (!response.errors) return;
  const failures = response.items.flatMap((item) => Object.values(item)).filter((result) => result.error);
  throw new BulkWriteError(failures);
}

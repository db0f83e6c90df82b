import { scientificNameKey } from '#shared/domain/naming/naming';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { Reply, RequestContext } from '#shared/http/routeSpec';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { type BrainListFilter, countBrains, speciesIdsByKey } from './brainSql';

/** The ids of the species with this scientific name (normalised as naming.scientificNameKey does). */
export function cachedSpeciesIds(
  deps: QueryDeps,
  scientificName: string,
  now: GlobalPosition,
): Promise<number[]> {
  const key = scientificNameKey(scientificName);
  return deps.speciesIds.get(key, now, () => speciesIdsByKey(deps.readModels, key));
}

/**
 * X-Total-Count of a filter, kept until a brain (or an atlas or category it names) changes or an
 * embargo ends. The key is the statement's text and values: the visibility rule is in both (its
 * text per kind of viewer, the user's id a value), so one viewer's count is never another's.
 */
export const cachedCount = (deps: QueryDeps, filter: BrainListFilter, now: GlobalPosition): Promise<number> =>
  deps.brainCounts.get(
    `${filter.conditions.whereSql}\0${JSON.stringify(filter.conditions.params())}`,
    now,
    () => countBrains(deps.readModels, filter),
  );

/**
 * Who a kept answer is for: every anonymous caller sees the same brains, and so does every member
 * of staff (everything, emails included); any other signed-in caller has a view of their own
 * (their brains, those shared with them, their email). An answer is never served to a caller of
 * another view (decisions.md "Visibility and collaborators").
 */
export function viewKey(ctx: RequestContext): string {
  if (!ctx.principal) return 'anonymous';
  return ctx.principal.isStaff ? 'staff' : `user:${ctx.principal.userId}`;
}

/**
 * The answer to this exact request by this view (viewKey; links repeat its URL), kept until
 * anything a brain shows changes or an embargo ends (QueryDeps.embargoes). Errors are not kept.
 */
export async function cachedReply(
  deps: QueryDeps,
  ctx: RequestContext,
  answer: (now: GlobalPosition, signal: AbortSignal) => Promise<Reply>,
): Promise<Reply> {
  const now = await deps.readModelPosition.read();
  // Answers through the search index are kept only where its rankings are (QueryDeps.searchRankings).
  if (!deps.searchRankings && (ctx.query.search !== undefined || ctx.query.facets !== undefined))
    return answer(now, ctx.signal);
  const key = `${viewKey(ctx)} ${ctx.baseUrl}${ctx.req.originalUrl}`;
  // A load shared by several requests stops only when all of them have gone (ChangeAwareCache).
  const load = async (signal: AbortSignal) => {
    const reply = await answer(now, signal);
    return { status: reply.status, headers: reply.headers ?? {}, json: JSON.stringify(reply.body) };
  };
  const cached = await deps.brainPages.get(key, now, load, ctx.signal);
  return { ...cached, headers: { ...cached.headers } };
}

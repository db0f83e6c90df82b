import { Type } from '@sinclair/typebox';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { Reply, RequestContext, RouteSpec } from '#shared/http/routeSpec';
import { listQueryProperties, listReply, orderBy } from '#shared/query/listResponse';
import { SqlConditions } from '#shared/query/sqlConditions';
import { brainJson, brainSchema } from '#shared/views/brainViews';
import { effectiveVisibilitySql, whereVisible } from '#shared/query/brainVisibility';
import { VISIBILITIES, type Visibility, isVisibility } from '#shared/domain/brains/visibility';
import { StringEnum } from '#shared/views/stringEnum';
import { type QueryDeps, brainViewFor, viewerFor } from '#services/query-api/queryDeps';
import { type BrainListFilter, brainIdOf, fetchBrainPage, shapeOf, shapeQueryProperty } from './brainSql';
import { cachedCount, cachedReply, cachedSpeciesIds } from './brainLookups';
import { brainListSchema, searchBrains, searchQueryProperties } from './searchBrains';

const ORDERING = {
  date_uploaded: 'b.date_uploaded',
  id: 'b.id',
  name: 'lower(b.name)',
  readable_id: 'b.readable_id',
};

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim() : undefined);

/**
 * The filters of decisions.md ("Brains"), combined with AND, and the visibility rule for who asks
 * (decisions.md "Visibility and collaborators"), with `visibility` applied after it; see
 * BrainListFilter. (`search` and `facets` go through searchBrains.)
 */
async function filters(deps: QueryDeps, ctx: RequestContext, now: GlobalPosition): Promise<BrainListFilter> {
  const { query } = ctx;
  const filter = new SqlConditions();
  const species = text(query.species);
  if (species !== undefined) {
    const ids = await cachedSpeciesIds(deps, species, now);
    // One id (the rule) keeps the page an ordered index range; `= ANY` would need a sort.
    if (ids.length === 0) filter.where('false');
    else if (ids.length === 1) filter.where(`b.species_id = ${filter.param(ids[0])}`);
    else filter.where(`b.species_id = ANY(${filter.param(ids)}::integer[])`);
  }
  if (typeof query.verified === 'boolean') filter.where(`b.verified = ${filter.param(query.verified)}`);
  if (typeof query.uploader === 'number') filter.where(`b.uploader_id = ${filter.param(query.uploader)}`);
  const atlas = text(query.atlas);
  if (atlas !== undefined) {
    const id = brainIdOf(atlas);
    filter.where(
      `b.atlas_id = ${id !== undefined ? filter.param(id) : `(SELECT id FROM atlases WHERE slug = ${filter.param(atlas.toLowerCase())})`}`,
    );
  }
  const category = text(query.category);
  if (category !== undefined) {
    const id = brainIdOf(category);
    filter.where(
      `b.category_id = ${id !== undefined ? filter.param(id) : `(SELECT id FROM categories WHERE name = ${filter.param(category.toLowerCase())})`}`,
    );
  }
  const visibility: Visibility | undefined = isVisibility(query.visibility) ? query.visibility : undefined;
  // Placement filters alone are summed over brain_counts (public brains) before the rest is added.
  const placementWhere =
    query.uploader === undefined && (visibility === undefined || visibility === 'public')
      ? filter.whereSql
      : undefined;
  whereVisible(filter, viewerFor(ctx));
  if (visibility !== undefined) filter.where(effectiveVisibilitySql(visibility));
  return { conditions: filter, placementWhere };
}

const BrainsQuery = Type.Object({
  ...listQueryProperties,
  shape: shapeQueryProperty,
  species: Type.Optional(Type.String({ description: 'Scientific name, case-insensitive.' })),
  verified: Type.Optional(Type.Boolean()),
  uploader: Type.Optional(Type.Integer({ minimum: 1, description: 'Uploader user id.' })),
  atlas: Type.Optional(Type.String({ description: 'Atlas id or slug.' })),
  category: Type.Optional(Type.String({ description: 'Category id or name (case-insensitive).' })),
  visibility: Type.Optional(
    StringEnum(VISIBILITIES, {
      description:
        'Among the brains you may see, those that read as this visibility now (an embargo whose time has passed reads as public).',
    }),
  ),
  ...searchQueryProperties,
});

export const listBrainsRoute = (deps: QueryDeps): RouteSpec<unknown, typeof BrainsQuery> => ({
  method: 'get',
  path: '/api/brains/',
  operationId: 'listBrains',
  summary: 'Brains, newest first',
  description:
    'Without page and page_size: an array in shape A. With either: {count, next, previous, results} in shape B. `shape` overrides. Filters combine with AND. `ordering` accepts date_uploaded, id, name, readable_id. `search` and `facets` go through the search index (docs/search.md).',
  tags: ['brains'],
  auth: 'public',
  query: BrainsQuery,
  responses: { 200: { description: 'Brains', schema: brainListSchema(brainSchema) } },
  handler: (ctx) => cachedReply(deps, ctx, (now, signal) => brainList(deps, ctx, now, signal)),
});

/** `signal`: every request waiting for this answer has gone (the search statement may stop then). */
async function brainList(
  deps: QueryDeps,
  ctx: RequestContext,
  now: GlobalPosition,
  signal: AbortSignal,
): Promise<Reply> {
  const paged = ctx.query.page !== undefined || ctx.query.page_size !== undefined;
  const shape = shapeOf(ctx.query, paged ? 'b' : 'a');
  const searched = await searchBrains(deps, ctx, shape, paged, now, signal);
  if (searched) return searched;
  const filter = await filters(deps, ctx, now);
  const order = orderBy(ctx.query.ordering, ORDERING, 'b.date_uploaded DESC', 'b.id DESC');
  let total = 0;
  return listReply(ctx, {
    count: async () => (total = await cachedCount(deps, filter, now)),
    fetch: async (window) =>
      (await fetchBrainPage(deps.readModels, filter, order, window, total)).map((row) =>
        brainJson(shape, row, brainViewFor(deps, ctx)),
      ),
  });
}

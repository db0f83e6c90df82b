import type { RouteSpec } from '../../../../shared/http/routeSpec';
import { listQueryProperties, listReply, orderBy } from '../../../../shared/query/listResponse';
import { SqlConditions } from '../../../../shared/query/sqlConditions';
import { scientificNameKey } from '../../../../shared/domain/naming/naming';
import { brainJson, brainSchema } from '../../../../shared/views/brainViews';
import type { QueryDeps } from '../../queryDeps';
import {
  BRAIN_FROM,
  BRAIN_SELECT,
  type BrainSqlRow,
  brainIdOf,
  shapeOf,
  shapeQueryProperty,
} from './brainSql';
import { brainListSchema, searchBrains, searchQueryProperties } from './searchBrains';

const ORDERING = {
  date_uploaded: 'b.date_uploaded',
  id: 'b.id',
  name: 'lower(b.name)',
  readable_id: 'b.readable_id',
};

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim() : undefined);

/** The filters of decisions.md ("Brains"), combined with AND (`search` goes through searchBrains). */
function filters(query: Record<string, unknown>): SqlConditions {
  const filter = new SqlConditions();
  const species = text(query.species);
  if (species !== undefined)
    filter.where(
      `regexp_replace(lower(s.scientific_name), '[[:space:]+_-]+', ' ', 'g') = ${filter.param(scientificNameKey(species))}`,
    );
  if (typeof query.verified === 'boolean') filter.where(`b.verified = ${filter.param(query.verified)}`);
  if (typeof query.uploader === 'number') filter.where(`b.uploader_id = ${filter.param(query.uploader)}`);
  const atlas = text(query.atlas);
  if (atlas !== undefined) {
    const id = brainIdOf(atlas);
    filter.where(
      id !== undefined ? `b.atlas_id = ${filter.param(id)}` : `a.slug = ${filter.param(atlas.toLowerCase())}`,
    );
  }
  const category = text(query.category);
  if (category !== undefined) {
    const id = brainIdOf(category);
    filter.where(
      id !== undefined
        ? `b.category_id = ${filter.param(id)}`
        : `c.name = ${filter.param(category.toLowerCase())}`,
    );
  }
  return filter;
}

export const listBrainsRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/',
  operationId: 'listBrains',
  summary: 'Brains, newest first',
  description:
    'Without page and page_size: an array in shape A. With either: {count, next, previous, results} in shape B. `shape` overrides. Filters combine with AND. `ordering` accepts date_uploaded, id, name, readable_id. `search` and `facets` go through the search index (see README, Search).',
  tags: ['brains'],
  auth: 'public',
  query: {
    type: 'object',
    properties: {
      ...listQueryProperties,
      shape: shapeQueryProperty,
      species: { type: 'string', description: 'Scientific name, case-insensitive.' },
      verified: { type: 'boolean' },
      uploader: { type: 'integer', minimum: 1, description: 'Uploader user id.' },
      atlas: { type: 'string', description: 'Atlas id or slug.' },
      category: { type: 'string', description: 'Category id or name (case-insensitive).' },
      ...searchQueryProperties,
    },
  },
  responses: { 200: { description: 'Brains', schema: brainListSchema(brainSchema) } },
  async handler(ctx) {
    const paged = ctx.query.page !== undefined || ctx.query.page_size !== undefined;
    const shape = shapeOf(ctx.query, paged ? 'b' : 'a');
    const searched = await searchBrains(deps, ctx, shape, paged);
    if (searched) return searched;
    const filter = filters(ctx.query);
    const order = orderBy(ctx.query.ordering, ORDERING, 'b.date_uploaded DESC', 'b.id DESC');
    return listReply(ctx, {
      count: async () =>
        Number(
          (
            await deps.readModels.query<{ n: string }>(
              `SELECT count(*) AS n ${BRAIN_FROM} ${filter.whereSql}`,
              filter.params(),
            )
          ).rows[0]?.n ?? 0,
        ),
      fetch: async ({ limit, offset }) =>
        (
          await deps.readModels.query<BrainSqlRow>(
            `${BRAIN_SELECT} ${filter.whereSql} ORDER BY ${order} LIMIT ${filter.extra(0)} OFFSET ${filter.extra(1)}`,
            filter.params(limit, offset),
          )
        ).rows.map((row) => brainJson(shape, row, ctx.baseUrl)),
    });
  },
});

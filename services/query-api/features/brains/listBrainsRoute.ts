import type { Pool } from 'pg';
import type { RouteSpec } from '../../../../shared/http/routeSpec';
import {
  listQueryProperties,
  listReply,
  listResponseSchema,
  orderBy,
} from '../../../../shared/query/listResponse';
import { SqlConditions } from '../../../../shared/query/sqlConditions';
import { scientificNameKey } from '../../../../shared/domain/naming/naming';
import { brainJson, brainSchema } from '../../../../shared/views/brainViews';
import type { QueryDeps } from '../../queryDeps';
import {
  type BrainListFilter,
  brainIdOf,
  countBrains,
  fetchBrainPage,
  shapeOf,
  shapeQueryProperty,
  speciesIdsByKey,
} from './brainSql';

const ORDERING = {
  date_uploaded: 'b.date_uploaded',
  id: 'b.id',
  name: 'lower(b.name)',
  readable_id: 'b.readable_id',
};

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim() : undefined);

/** The filters of decisions.md ("Brains"), combined with AND; see BrainListFilter. */
async function filters(pool: Pool, query: Record<string, unknown>): Promise<BrainListFilter> {
  const filter = new SqlConditions();
  const species = text(query.species);
  if (species !== undefined) {
    const ids = await speciesIdsByKey(pool, scientificNameKey(species));
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
  const search = text(query.search);
  const searching = search !== undefined && search !== '';
  if (searching) {
    const term = filter.param(search);
    const id = brainIdOf(search);
    filter.where(
      `strpos(lower(b.name), lower(${term})) > 0 OR b.readable_id = lower(${term})` +
        (id !== undefined ? ` OR b.id = ${filter.param(id)}` : ''),
    );
  }
  return { conditions: filter, countable: query.uploader === undefined && !searching };
}

export const listBrainsRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/',
  operationId: 'listBrains',
  summary: 'Brains, newest first',
  description:
    'Without page and page_size: an array in shape A. With either: {count, next, previous, results} in shape B. `shape` overrides. Filters combine with AND. `ordering` accepts date_uploaded, id, name, readable_id.',
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
      search: {
        type: 'string',
        description: 'Substring of the name (case-insensitive), or an exact id or readable_id.',
      },
    },
  },
  responses: { 200: { description: 'Brains', schema: listResponseSchema(brainSchema) } },
  async handler(ctx) {
    const paged = ctx.query.page !== undefined || ctx.query.page_size !== undefined;
    const shape = shapeOf(ctx.query, paged ? 'b' : 'a');
    const filter = await filters(deps.readModels, ctx.query);
    const order = orderBy(ctx.query.ordering, ORDERING, 'b.date_uploaded DESC', 'b.id DESC');
    let total = 0;
    return listReply(ctx, {
      count: async () => (total = await countBrains(deps.readModels, filter)),
      fetch: async (window) =>
        (await fetchBrainPage(deps.readModels, filter, order, window, total)).map((row) =>
          brainJson(shape, row, ctx.baseUrl),
        ),
    });
  },
});

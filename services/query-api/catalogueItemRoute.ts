import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import type { RequestContext, RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { catalogueAsOfReply } from '#shared/audit/replay/catalogueAsOf';
import type { Replayed } from '#shared/audit/replay/catalogueReplay';
import type { CatalogueReplaySource, ReplayPoint } from '#shared/audit/replay/catalogueReplaySource';
import type { Viewer } from '#shared/domain/brains/visibility';
import { SqlConditions } from '#shared/query/sqlConditions';
import { visibleCatalogueSource } from '#shared/query/visibleCatalogueSource';
import { type QueryDeps, viewerFor } from './queryDeps';

/** What differs between the detail routes of categories, species and atlases. */
export interface CatalogueItem<Row extends { readonly id: number }> {
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** What the caller reads in the OpenAPI document besides the brains_count rule. */
  readonly description?: string;
  /** The path parameter naming the item, and what a 404 means. */
  readonly param: string;
  readonly what: string;
  readonly schema: TSchema;
  /** The item's row (its brains_count for this viewer) named by the path parameter: the SELECT with its WHERE. */
  readonly select: (conditions: SqlConditions, viewer: Viewer, param: string) => string;
  readonly json: (row: Row, ctx: RequestContext) => unknown;
  /** The item as this route answered right after the point; undefined if it did not exist. */
  readonly at: (
    source: CatalogueReplaySource,
    id: number,
    point: ReplayPoint,
    ctx: RequestContext,
  ) => Promise<Replayed<unknown> | undefined>;
}

/**
 * GET of one category, species or atlas, today or `as_of` a time or position (decisions.md
 * "Audit"): found by its name today (they are never deleted or renamed), replayed when as_of is
 * given, with the brains the caller may not see neither shown nor counted either way.
 */
export const catalogueItemRoute = <Row extends { readonly id: number }>(
  deps: QueryDeps,
  item: CatalogueItem<Row>,
): RouteSpec => ({
  method: 'get',
  path: item.path,
  operationId: item.operationId,
  summary: item.summary,
  description: [item.description, 'Brains you may not see are neither listed nor counted (with as_of too).']
    .filter(Boolean)
    .join(' '),
  tags: [item.tag],
  auth: 'public',
  query: Type.Object({ as_of: asOfQueryProperty }),
  responses: {
    200: { description: `The ${item.what}`, schema: item.schema },
    400: { description: 'Malformed as_of' },
    404: {
      description: `No ${item.what} with this ${item.param.replace('_', ' ')} (as of as_of, when given)`,
    },
  },
  async handler(ctx) {
    const asOf = parseAsOf(ctx.query.as_of);
    const viewer = viewerFor(ctx);
    const conditions = new SqlConditions();
    const select = item.select(conditions, viewer, ctx.params[item.param] ?? '');
    const { rows } = await deps.readModels.query<Row>(select, conditions.params());
    const row = rows[0];
    if (!row) throw new NotFoundError();
    if (asOf)
      return catalogueAsOfReply(deps.readModels, deps.store, asOf, (source, point) =>
        item.at(visibleCatalogueSource(source, deps, viewer), row.id, point, ctx),
      );
    return { status: 200, body: item.json(row, ctx) };
  },
});

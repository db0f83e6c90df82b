import type { Pool } from 'pg';
import type { SearchFilters, SearchSort, SearchSortField } from '#shared/search/searchIndex';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { RequestContext } from '#shared/http/routeSpec';
import { isVisibility, type Viewer } from '#shared/domain/brains/visibility';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { brainIdOf } from './brainSql';
import { cachedSpeciesIds } from './brainLookups';

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim() : undefined);

async function ids(pool: Pool, sql: string, value: string): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>(sql, [value]);
  return rows.map((row) => row.id);
}

/**
 * The viewer as the rule reads them: staff see everything whoever they are, so they share one
 * kept ranking (QueryDeps.searchRankings is keyed by the search, filters included).
 */
function ruleViewer(viewer: Viewer): Viewer {
  return viewer.isStaff ? { userId: null, isStaff: true } : viewer;
}

/**
 * The list's filters (decisions.md "Brains") as the SearchIndex takes them, with the caller as the
 * viewer (decisions.md "Visibility and collaborators": only what they may see, in every answer,
 * total and facet) and the `visibility` filter, applied after the rule. Names and slugs become
 * the ids they name, exactly as the SQL path compares them (the same normalised scientific name,
 * lowercase slug and category name; a number is an id). A name nothing has gives an empty list,
 * which matches no brain, as the SQL path's join would.
 */
export async function searchFilters(
  deps: QueryDeps,
  ctx: RequestContext,
  now: GlobalPosition,
): Promise<SearchFilters> {
  const { query } = ctx;
  const pool = deps.readModels;
  const species = text(query.species);
  const atlas = text(query.atlas);
  const category = text(query.category);
  const atlasId = atlas === undefined ? undefined : brainIdOf(atlas);
  const categoryId = category === undefined ? undefined : brainIdOf(category);
  return {
    speciesIds: species === undefined ? undefined : await cachedSpeciesIds(deps, species, now),
    atlasIds:
      atlas === undefined
        ? undefined
        : atlasId !== undefined
          ? [atlasId]
          : await ids(pool, 'SELECT id FROM atlases WHERE slug = $1', atlas.toLowerCase()),
    categoryIds:
      category === undefined
        ? undefined
        : categoryId !== undefined
          ? [categoryId]
          : await ids(pool, 'SELECT id FROM categories WHERE name = $1', category.toLowerCase()),
    verified: typeof query.verified === 'boolean' ? query.verified : undefined,
    uploaderId: typeof query.uploader === 'number' ? query.uploader : undefined,
    viewer: ruleViewer(viewerFor(ctx)),
    visibility: isVisibility(query.visibility) ? query.visibility : undefined,
  };
}

const SORT_FIELDS: ReadonlySet<string> = new Set<SearchSortField>([
  'date_uploaded',
  'id',
  'name',
  'readable_id',
]);

/**
 * `ordering` as the SQL path reads it (listResponse.orderBy): comma-separated, "-" for descending,
 * unknown fields ignored; undefined when nothing is left (relevance, or newest first).
 */
export function searchSort(ordering: unknown): SearchSort[] | undefined {
  if (typeof ordering !== 'string') return undefined;
  const sort = ordering
    .split(',')
    .map((f) => f.trim())
    .flatMap((field): SearchSort[] => {
      const descending = field.startsWith('-');
      const name = descending ? field.slice(1) : field;
      return SORT_FIELDS.has(name) ? [{ field: name as SearchSortField, descending }] : [];
    });
  return sort.length > 0 ? sort : undefined;
}

import type { Pool } from 'pg';
import type { FacetCount, SearchFacet, SearchFacets } from '#shared/search/searchIndex';

/** The reply's facets: ids with their names, verified as a boolean value. */
export interface FacetsJson {
  species?: { id: number; name: string; count: number }[];
  atlas?: { id: number; name: string; count: number }[];
  category?: { id: number; name: string; count: number }[];
  verified?: { value: boolean; count: number }[];
}

const NAMED: Readonly<Record<Exclude<SearchFacet, 'verified'>, string>> = {
  species: 'species',
  atlas: 'atlases',
  category: 'categories',
};

async function named(
  pool: Pool,
  table: string,
  counts: readonly FacetCount[],
): Promise<{ id: number; name: string; count: number }[]> {
  const ids = counts.map((c) => Number(c.value));
  if (ids.length === 0) return [];
  const { rows } = await pool.query<{ id: number; name: string }>(
    `SELECT id, name FROM ${table} WHERE id = ANY($1::integer[])`,
    [ids],
  );
  const names = new Map(rows.map((row) => [row.id, row.name]));
  // The index's order (most frequent first); a value without a row yet still counts, nameless.
  return counts.map((c) => ({ id: Number(c.value), name: names.get(Number(c.value)) ?? '', count: c.count }));
}

export async function brainFacets(pool: Pool, facets: SearchFacets): Promise<FacetsJson> {
  const json: FacetsJson = {};
  for (const facet of Object.keys(facets) as SearchFacet[]) {
    const counts = facets[facet] ?? [];
    if (facet === 'verified')
      json.verified = counts.map((c) => ({ value: c.value === true, count: c.count }));
    else json[facet] = await named(pool, NAMED[facet], counts);
  }
  return json;
}

const namedCounts = {
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'name', 'count'],
    properties: { id: { type: 'integer' }, name: { type: 'string' }, count: { type: 'integer' } },
  },
} as const;

/** The envelope's `facets` (only the requested ones are present), for the OpenAPI document. */
export const facetsSchema = {
  type: 'object',
  description:
    'With `facets=`: per requested facet, the brains matching the search and filters counted per value, most frequent first (at most 200 values). Brains without an atlas (or species) are not counted under atlas (or species).',
  properties: {
    species: namedCounts,
    atlas: namedCounts,
    category: namedCounts,
    verified: {
      type: 'array',
      items: {
        type: 'object',
        required: ['value', 'count'],
        properties: { value: { type: 'boolean' }, count: { type: 'integer' } },
      },
    },
  },
} as const;

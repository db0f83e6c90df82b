import { Type } from '@sinclair/typebox';
import { StringEnum } from '#shared/views/stringEnum';
import { databaseIdOf } from '#shared/http/ids';
import type { Pool, QueryConfig } from 'pg';
import type { BrainARow, BrainShape } from '#shared/views/brainViews';
import type { SqlConditions } from '#shared/query/sqlConditions';
import type { Window } from '#shared/query/listResponse';
import { effectiveVisibilitySql } from '#shared/query/brainVisibility';
import { namedStatement } from '#shared/infra/postgres/namedStatement';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';
import { SCIENTIFIC_NAME_KEY_SQL } from '#services/query-api/features/species/speciesSql';

/** What both shapes show beside a brain (b): atlas, species, category, uploader and file, flat. */
const BRAIN_JOINS = `LEFT JOIN atlases a ON a.id = b.atlas_id
  LEFT JOIN species s ON s.id = b.species_id
  LEFT JOIN categories c ON c.id = b.category_id
  LEFT JOIN users u ON u.id = b.uploader_id
  LEFT JOIN file_uploads f ON f.id = b.file_upload_id::uuid`;

const BRAIN_COLUMNS = `b.id, b.readable_id, b.uuid, b.name, b.description, b.date_uploaded, b.website, b.verified,
    b.category_id, b.uploader_id, b.atlas_id, b.is_reference, b.extra_link, b.color, b.revision,
    b.visibility, b.embargo_until,
    a.name AS atlas_name, a.slug AS atlas_slug, a.description AS atlas_description,
    b.species_id, s.name AS species_name, s.scientific_name, c.name AS category_name,
    u.username AS uploader_username, u.email AS uploader_email,
    f.filename AS file_name, f.size_bytes AS file_size_bytes,
    f.metadata AS file_metadata, f.preview_blob_key AS file_preview_key`;

/** Whether a brain (b) reads as public now: stored public, or an embargo whose time has passed. */
export const OPEN_SQL = `(${effectiveVisibilitySql('public')})`;

export const BRAIN_SELECT = `SELECT ${BRAIN_COLUMNS} FROM brains b ${BRAIN_JOINS}`;

export interface BrainSqlRow extends BrainARow {
  readonly revision: string;
}

/** An id from a path or query segment; undefined when it cannot name a brain. */
export const brainIdOf = databaseIdOf;

/** The first brain matching the conditions in the given order; undefined when none does. */
export async function findBrain(
  pool: Pool,
  filter: SqlConditions,
  order = 'b.id',
): Promise<BrainSqlRow | undefined> {
  const { rows } = await pool.query<BrainSqlRow>(
    `${BRAIN_SELECT} ${filter.whereSql} ORDER BY ${order} LIMIT 1`,
    filter.params(),
  );
  return rows[0];
}

/**
 * The list's filters are conditions on the brains row alone (alias b, no joins), so that a page
 * is an ordered range of one of brainsProjection's indexes; the visibility rule
 * (shared/query/brainVisibility) is one of them, over columns those indexes include. Names are
 * resolved to ids first (scalar subqueries on unique columns, speciesIdsByKey for scientific
 * names), never joined.
 */
export interface BrainListFilter {
  /** What a listed brain matches: the filters, the visibility rule for the viewer, `visibility`. */
  readonly conditions: SqlConditions;
  /**
   * When the filters name only placement columns (atlas_id, species_id, category_id, verified)
   * and no visibility but public: their WHERE alone, which brain_counts (public brains only) is
   * summed by; its placeholders are the first ones of `conditions`. Undefined: counted over brains.
   */
  readonly placementWhere: string | undefined;
}

/** The page query's joins cost more to plan than to run: the list's statements are named. */
const statement = (text: string, values: unknown[]): QueryConfig => namedStatement('brains', text, values);

/**
 * X-Total-Count, exact for the viewer the conditions carry the rule of. Placement filters: a sum
 * over brain_counts (a few hundred rows of public brains, whatever the catalogue's size) plus the
 * non-public brains that match (an ended embargo, the viewer's own, shared with them; staff: all),
 * found through the partial index of the non-public brains. Otherwise an indexed count (an
 * uploader's brains, a visibility but public).
 */
export async function countBrains(
  pool: Pool,
  { conditions, placementWhere }: BrainListFilter,
): Promise<number> {
  const count = async (sql: string): Promise<number> => {
    const { rows } = await pool.query<{ n: string }>(statement(sql, conditions.params()));
    return Number(rows[0]?.n ?? 0);
  };
  const counted = `SELECT count(*) AS n FROM brains b ${conditions.whereSql}`;
  if (placementWhere === undefined) return count(counted);
  const nonPublic = conditions.copy().where(`b.visibility <> 'public'`);
  try {
    return await count(
      `SELECT (SELECT coalesce(sum(b.brains), 0) FROM brain_counts b ${placementWhere})
            + (SELECT count(*) FROM brains b ${nonPublic.whereSql}) AS n`,
    );
  } catch (error) {
    // brain_counts comes with brains v2; while an upgrade rebuilds v2 beside the live v1 there is
    // no such view yet. Until every deployment has swapped to v2: delete with the next layout change.
    if (sqlState(error) !== SQLSTATE.undefinedTable) throw error;
    return count(counted);
  }
}

/**
 * One page, in one statement: the ids from an index in the list's order (index-only, however deep
 * the OFFSET), then only those brains' rows joined with what the shapes show. OFFSET walks the
 * index, so a page past the middle is read from the other end (the order mirrored, the rows turned
 * back): no page walks more than half the matching brains. `total` is the count the answer reports.
 */
export async function fetchBrainPage(
  pool: Pool,
  { conditions }: BrainListFilter,
  order: string,
  { limit, offset }: Window,
  total: number,
): Promise<BrainSqlRow[]> {
  const fromEnd = offset + limit / 2 > total / 2 && offset < total;
  const window = fromEnd
    ? {
        order: mirrored(order),
        limit: Math.min(limit, total - offset),
        offset: Math.max(0, total - offset - limit),
      }
    : { order, limit, offset };
  // The ids as an array (an InitPlan) that the rows are looked up by: the generic plan of the
  // named statement then stays an index range plus primary-key lookups. Joined with the page as a
  // subquery instead, it scans all brains to find the page's rows.
  const { rows } = await pool.query<BrainSqlRow>(
    statement(
      `${BRAIN_SELECT} WHERE b.id = ANY(ARRAY(
         SELECT b.id FROM brains b ${conditions.whereSql} ORDER BY ${window.order}
          LIMIT ${conditions.extra(0)} OFFSET ${conditions.extra(1)}))
       ORDER BY ${window.order}`,
      conditions.params(window.limit, window.offset),
    ),
  );
  return fromEnd ? rows.reverse() : rows;
}

/**
 * The brains with these ids, in that order (one deleted meanwhile is left out). A named statement:
 * planned once per connection, its generic plan looks each id up by index.
 */
export async function brainsByIds(pool: Pool, ids: readonly number[]): Promise<BrainSqlRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query<BrainSqlRow>(
    statement(`${BRAIN_SELECT} WHERE b.id = ANY($1::integer[])`, [ids]),
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/**
 * An ORDER BY of "expression ASC|DESC" terms (listResponse.orderBy's) read backwards. Exact,
 * NULLs included: ASC puts them last and DESC first.
 */
export function mirrored(order: string): string {
  return order
    .split(', ')
    .map((term) => {
      const match = /^(.+) (ASC|DESC)$/.exec(term);
      if (!match) throw new Error(`cannot mirror the ordering term ${term}`);
      return `${match[1]} ${match[2] === 'ASC' ? 'DESC' : 'ASC'}`;
    })
    .join(', ');
}

/** Species whose scientific name has this key (naming.scientificNameKey): one, unless names differ only by separators. */
export async function speciesIdsByKey(pool: Pool, key: string): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>(
    statement(`SELECT s.id FROM species s WHERE ${SCIENTIFIC_NAME_KEY_SQL} = $1 ORDER BY s.id`, [key]),
  );
  return rows.map((row) => row.id);
}

/** decisions.md: `?shape=a|b` overrides the endpoint's own shape. */
export function shapeOf(query: Record<string, unknown>, fallback: BrainShape): BrainShape {
  return query.shape === 'a' || query.shape === 'b' ? query.shape : fallback;
}

export const shapeQueryProperty = Type.Optional(
  StringEnum(['a', 'b'], {
    description: 'Overrides the shape of the answer: a (catalogue form) or b (detail form).',
  }),
);

import type { Pool } from 'pg';
import type { BrainARow, BrainShape } from '../../../../shared/views/brainViews';
import type { SqlConditions } from '../../../../shared/query/sqlConditions';

/** Brains with what both shapes show: atlas, species, category, uploader and file, flat. */
export const BRAIN_FROM = `FROM brains b
  LEFT JOIN atlases a ON a.id = b.atlas_id
  LEFT JOIN species s ON s.id = b.species_id
  LEFT JOIN categories c ON c.id = b.category_id
  LEFT JOIN users u ON u.id = b.uploader_id
  LEFT JOIN file_uploads f ON f.id = b.file_upload_id::uuid`;

export const BRAIN_SELECT = `
  SELECT b.id, b.readable_id, b.uuid, b.name, b.description, b.date_uploaded, b.website, b.verified,
    b.category_id, b.uploader_id, b.atlas_id, b.is_reference, b.extra_link, b.color, b.revision,
    a.name AS atlas_name, a.slug AS atlas_slug, a.description AS atlas_description,
    b.species_id, s.name AS species_name, s.scientific_name, c.name AS category_name,
    u.username AS uploader_username, u.email AS uploader_email,
    f.filename AS file_name, f.size_bytes AS file_size_bytes,
    f.metadata AS file_metadata, f.preview_blob_key AS file_preview_key
  ${BRAIN_FROM}`;

export interface BrainSqlRow extends BrainARow {
  readonly revision: string;
}

const MAX_ID = 2_147_483_647;

/** An id from a path or query segment; undefined when it cannot name a brain. */
export function brainIdOf(text: string): number | undefined {
  if (!/^\d{1,10}$/.test(text)) return undefined;
  const id = Number(text);
  return id >= 1 && id <= MAX_ID ? id : undefined;
}

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

/** decisions.md: `?shape=a|b` overrides the endpoint's own shape. */
export function shapeOf(query: Record<string, unknown>, fallback: BrainShape): BrainShape {
  return query.shape === 'a' || query.shape === 'b' ? query.shape : fallback;
}

export const shapeQueryProperty = {
  type: 'string',
  enum: ['a', 'b'],
  description: 'Overrides the shape of the answer: a (catalogue form) or b (detail form).',
} as const;

import type { PoolClient } from 'pg';
import type { GlobalPosition } from '../../../shared/eventStore/eventStore';
import type { BrainCreated, BrainFields } from '../../../shared/domain/brains/events';
import type { BrainSearchDocument } from '../../../shared/search/searchIndex';

/** The search projection's physical tables (ProjectionContext.table of each logical name). */
export interface SearchProjectionTables {
  readonly documents: string;
  readonly species: string;
  readonly atlases: string;
  readonly categories: string;
}

/** A document row as the statements below return it. */
interface DocumentRow {
  brain_id: number;
  readable_id: string;
  name: string;
  description: string;
  species_id: number | null;
  species_name: string | null;
  scientific_name: string | null;
  atlas_id: number | null;
  atlas_name: string | null;
  category_id: number;
  category_name: string | null;
  verified: boolean;
  uploader_id: number;
  date_uploaded: Date;
}

const RETURNING = `RETURNING brain_id, readable_id, name, description, species_id, species_name, scientific_name,
  atlas_id, atlas_name, category_id, category_name, verified, uploader_id, date_uploaded`;

/** Brain fields a BrainUpdated may change that the search document keeps, by column. */
const DOCUMENT_FIELDS: Readonly<Partial<Record<keyof BrainFields, string>>> = {
  name: 'name',
  description: 'description',
  atlasId: 'atlas_id',
  speciesId: 'species_id',
  categoryId: 'category_id',
  verified: 'verified',
};

/** Fields whose change means the denormalised names must be looked up again. */
const NAMED_FIELDS: readonly (keyof BrainFields)[] = ['atlasId', 'speciesId', 'categoryId'];

/** The names of the document's species, atlas and category, from the projection's own lookups. */
function namesFrom(t: SearchProjectionTables, species: string, atlas: string, category: string): string {
  return `(SELECT name FROM ${t.species} WHERE id = ${species}),
    (SELECT scientific_name FROM ${t.species} WHERE id = ${species}),
    (SELECT name FROM ${t.atlases} WHERE id = ${atlas}),
    (SELECT name FROM ${t.categories} WHERE id = ${category})`;
}

export function toSearchDocument(row: DocumentRow): BrainSearchDocument {
  return {
    brainId: row.brain_id,
    readableId: row.readable_id,
    name: row.name,
    description: row.description,
    speciesId: row.species_id,
    speciesName: row.species_name,
    scientificName: row.scientific_name,
    atlasId: row.atlas_id,
    atlasName: row.atlas_name,
    categoryId: row.category_id,
    // A brain's category always exists before it; the empty name only guards a corrupt stream.
    categoryName: row.category_name ?? '',
    verified: row.verified,
    uploaderId: row.uploader_id,
    dateUploaded: row.date_uploaded,
  };
}

const positionValues = (position: GlobalPosition): string[] => [
  position.commit.toString(),
  position.prepare.toString(),
];

export async function insertDocument(
  client: PoolClient,
  t: SearchProjectionTables,
  d: BrainCreated['data'],
  position: GlobalPosition,
): Promise<BrainSearchDocument[]> {
  const { rows } = await client.query<DocumentRow>(
    `INSERT INTO ${t.documents} (brain_id, removed, position_commit, position_prepare, readable_id, name,
       description, species_id, atlas_id, category_id, verified, uploader_id, date_uploaded,
       species_name, scientific_name, atlas_name, category_name)
     SELECT $1, false, $2, $3, $4, $5, $6, $7::integer, $8::integer, $9::integer, $10, $11, $12,
       ${namesFrom(t, '$7::integer', '$8::integer', '$9::integer')}
     ${RETURNING}`,
    [
      d.brainId,
      ...positionValues(position),
      d.readableId,
      d.name,
      d.description,
      d.speciesId,
      d.atlasId,
      d.categoryId,
      d.verified,
      d.uploaderId,
      d.createdAt,
    ],
  );
  return rows.map(toSearchDocument);
}

/** Applies the changed fields; when the atlas, species or category changed, their names follow. */
export async function updateDocument(
  client: PoolClient,
  t: SearchProjectionTables,
  brainId: number,
  changes: Partial<BrainFields>,
  position: GlobalPosition,
): Promise<BrainSearchDocument[]> {
  const fields = Object.entries(changes).flatMap(([field, value]) => {
    const column = Object.hasOwn(DOCUMENT_FIELDS, field)
      ? DOCUMENT_FIELDS[field as keyof BrainFields]
      : undefined;
    return column ? [{ field: field as keyof BrainFields, column, value: value }] : [];
  });
  const assignments = fields.map(({ column }, i) => `${column} = $${i + 4}`);
  const renamed = fields.some(({ field }) => NAMED_FIELDS.includes(field));
  const { rows } = await client.query<DocumentRow>(
    `UPDATE ${t.documents} SET ${['position_commit = $2', 'position_prepare = $3', ...assignments].join(', ')}
      WHERE brain_id = $1 ${renamed ? '' : RETURNING}`,
    [brainId, ...positionValues(position), ...fields.map(({ value }) => value)],
  );
  if (!renamed) return rows.map(toSearchDocument);
  // The names in a second statement: in the first, SET would see the ids from before the change.
  const named = await client.query<DocumentRow>(
    `UPDATE ${t.documents} d SET (species_name, scientific_name, atlas_name, category_name) =
       (SELECT ${namesFrom(t, 'd.species_id', 'd.atlas_id', 'd.category_id')})
      WHERE brain_id = $1 ${RETURNING}`,
    [brainId],
  );
  return named.rows.map(toSearchDocument);
}

export async function deleteDocument(
  client: PoolClient,
  t: SearchProjectionTables,
  brainId: number,
): Promise<void> {
  await client.query(`DELETE FROM ${t.documents} WHERE brain_id = $1`, [brainId]);
}

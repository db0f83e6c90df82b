import type { PoolClient } from 'pg';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import type { BrainSearchDocument } from '#shared/search/searchIndex';

/** One document version, or a tombstone (document null), at the position of the event behind it. */
export interface DocumentWrite {
  readonly brainId: number;
  readonly document: BrainSearchDocument | null;
  readonly position: GlobalPosition;
}

const COLUMNS: readonly [column: string, type: string, value: (w: DocumentWrite) => unknown][] = [
  ['brain_id', 'integer', (w) => w.brainId],
  ['removed', 'boolean', (w) => w.document === null],
  ['position_commit', 'bigint', (w) => w.position.commit.toString()],
  ['position_prepare', 'bigint', (w) => w.position.prepare.toString()],
  ['readable_id', 'text', (w) => w.document?.readableId],
  ['name', 'text', (w) => w.document?.name],
  ['description', 'text', (w) => w.document?.description],
  ['species_id', 'integer', (w) => w.document?.speciesId],
  ['species_name', 'text', (w) => w.document?.speciesName],
  ['scientific_name', 'text', (w) => w.document?.scientificName],
  ['atlas_id', 'integer', (w) => w.document?.atlasId],
  ['atlas_name', 'text', (w) => w.document?.atlasName],
  ['category_id', 'integer', (w) => w.document?.categoryId],
  ['category_name', 'text', (w) => w.document?.categoryName],
  ['verified', 'boolean', (w) => w.document?.verified],
  ['uploader_id', 'integer', (w) => w.document?.uploaderId],
  ['date_uploaded', 'timestamptz', (w) => w.document?.dateUploaded.toISOString()],
  ['visibility', 'text', (w) => w.document?.visibility],
  ['embargo_until', 'timestamptz', (w) => w.document?.embargoUntil?.toISOString()],
  // An array per write: unnest of a two-dimensional array would flatten it, so each is a literal.
  ['readers', 'text', (w) => (w.document ? `{${w.document.readers.join(',')}}` : undefined)],
];

/**
 * Writes a batch (at most one write per brain) as one statement of parallel arrays. The guarded
 * upsert keeps whichever version has the later position, so replays and duplicates change nothing
 * and concurrent writers settle on the latest version under the row lock.
 */
export async function writeDocuments(
  client: PoolClient,
  documents: string,
  writes: readonly DocumentWrite[],
): Promise<void> {
  if (writes.length === 0) return;
  const names = COLUMNS.map(([column]) => column);
  const arrays = COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`);
  const selected = names.map((n) => (n === 'readers' ? 'readers::integer[]' : n));
  const updates = names.filter((n) => n !== 'brain_id').map((n) => `${n} = EXCLUDED.${n}`);
  await client.query(
    `INSERT INTO ${documents} AS d (${names.join(', ')})
     SELECT ${selected.join(', ')} FROM unnest(${arrays.join(', ')}) AS w(${names.join(', ')})
     ON CONFLICT (brain_id) DO UPDATE SET ${updates.join(', ')}
     WHERE (d.position_commit, d.position_prepare) < (EXCLUDED.position_commit, EXCLUDED.position_prepare)`,
    COLUMNS.map(([, , value]) => writes.map((w) => value(w) ?? null)),
  );
}

import {
  type Projection,
  type ProjectionContext,
  applyInOrder,
} from '../../../shared/projections/projection';
import type { BrainEvent, BrainFields } from '../../../shared/domain/brains/events';

/** Event field → column, for the fields a BrainUpdated may change (an own-property map). */
const COLUMNS: Readonly<Record<keyof BrainFields, string>> = {
  name: 'name',
  description: 'description',
  atlasId: 'atlas_id',
  speciesId: 'species_id',
  categoryId: 'category_id',
  isReference: 'is_reference',
  extraLink: 'extra_link',
  website: 'website',
  color: 'color',
  verified: 'verified',
};

/**
 * Read model of brains: one row per live brain, with the stream revision for its weak ETag.
 * Indexes serve the list's filters, each with the default order (newest first).
 */
export const brainsProjection: Projection = {
  name: 'brains',
  version: 1,
  tables: ['brains'],
  eventTypes: new Set(['BrainCreated', 'BrainUpdated', 'BrainDeleted']),

  async createTables({ client, table }) {
    const brains = table('brains');
    await client.query(`
      CREATE TABLE ${brains} (
        id integer PRIMARY KEY,
        readable_id text NOT NULL UNIQUE,
        uuid uuid NOT NULL,
        name text NOT NULL,
        description text NOT NULL,
        atlas_id integer,
        species_id integer,
        category_id integer NOT NULL,
        is_reference boolean NOT NULL,
        extra_link text NOT NULL,
        website text NOT NULL,
        color text NOT NULL,
        verified boolean NOT NULL,
        uploader_id integer NOT NULL,
        file_upload_id text,
        date_uploaded timestamptz NOT NULL,
        revision bigint NOT NULL
      )`);
    await client.query(`CREATE INDEX ON ${brains} (date_uploaded DESC, id DESC)`);
    for (const column of ['atlas_id', 'species_id', 'category_id', 'uploader_id', 'verified'])
      await client.query(`CREATE INDEX ON ${brains} (${column}, date_uploaded DESC, id DESC)`);
  },

  apply: applyInOrder<BrainEvent>(async (ctx, event, recorded) => [
    await applyOne(ctx, event, recorded.streamRevision),
  ]),
};

async function applyOne(
  { client, table }: ProjectionContext,
  event: BrainEvent,
  revision: bigint,
): Promise<string> {
  switch (event.type) {
    case 'BrainCreated': {
      const d = event.data;
      await client.query(
        `INSERT INTO ${table('brains')} (id, readable_id, uuid, name, description, atlas_id, species_id,
           category_id, is_reference, extra_link, website, color, verified, uploader_id, file_upload_id,
           date_uploaded, revision)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          d.brainId,
          d.readableId,
          d.uuid,
          d.name,
          d.description,
          d.atlasId,
          d.speciesId,
          d.categoryId,
          d.isReference,
          d.extraLink,
          d.website,
          d.color,
          d.verified,
          d.uploaderId,
          d.fileUploadId,
          d.createdAt,
          revision.toString(),
        ],
      );
      return `brain:${d.brainId}`;
    }
    case 'BrainUpdated': {
      const fields = Object.entries(event.data.changes).filter(([field]) => Object.hasOwn(COLUMNS, field));
      const assignments = fields.map(([field], i) => `${COLUMNS[field as keyof BrainFields]} = $${i + 3}`);
      await client.query(
        `UPDATE ${table('brains')} SET ${['revision = $2', ...assignments].join(', ')} WHERE id = $1`,
        [event.data.brainId, revision.toString(), ...fields.map(([, value]) => value as unknown)],
      );
      return `brain:${event.data.brainId}`;
    }
    case 'BrainDeleted':
      await client.query(`DELETE FROM ${table('brains')} WHERE id = $1`, [event.data.brainId]);
      return `brain:${event.data.brainId}`;
  }
}

import { type Projection, type ProjectionContext, applyInRuns } from '#shared/projections/projection';
import type { AtlasEvent } from '#shared/domain/atlases/events';
import type { BrainCreated, BrainEvent } from '#shared/domain/brains/events';
import { type CounterSpec, membershipTableSql } from '#shared/projections/memberCounts';
import { countBrainFor, countCreatedBrainsFor, isBrainCreated } from './brainMemberships';

type Handled = AtlasEvent | BrainEvent;

const COUNTS: CounterSpec = {
  members: 'atlas_members',
  owners: 'atlases',
  counters: { brain: 'brains_count' },
};

/** Read model of atlases with an exact brains_count. */
export const atlasesProjection: Projection = {
  name: 'atlases',
  version: 1,
  tables: ['atlases', 'atlas_members'],
  eventTypes: new Set(['AtlasCreated', 'BrainCreated', 'BrainUpdated', 'BrainDeleted']),

  async createTables({ client, table }) {
    await client.query(`
      CREATE TABLE ${table('atlases')} (
        id integer PRIMARY KEY,
        name text NOT NULL,
        slug text NOT NULL UNIQUE,
        description text NOT NULL,
        species_id integer NOT NULL,
        is_official boolean NOT NULL,
        verified boolean NOT NULL,
        version text NOT NULL,
        color text NOT NULL,
        publication_url text NOT NULL,
        created_by integer NOT NULL,
        created_at timestamptz NOT NULL,
        brains_count integer NOT NULL DEFAULT 0
      )`);
    await client.query(`CREATE INDEX ON ${table('atlases')} (species_id)`);
    await client.query(`CREATE INDEX ON ${table('atlases')} (lower(name), id)`);
    await client.query(membershipTableSql(table('atlas_members')));
  },

  apply: applyInRuns<Handled, BrainCreated>(
    isBrainCreated,
    (ctx, created) => countCreatedBrainsFor(ctx, COUNTS, created, 'atlasId', 'atlas'),
    applyOne,
  ),
};

async function applyOne(ctx: ProjectionContext, event: Handled): Promise<string[]> {
  switch (event.type) {
    case 'AtlasCreated': {
      const d = event.data;
      await ctx.client.query(
        `INSERT INTO ${ctx.table('atlases')} (id, name, slug, description, species_id, is_official, verified,
           version, color, publication_url, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          d.atlasId,
          d.name,
          d.slug,
          d.description,
          d.speciesId,
          d.isOfficial,
          d.verified,
          d.version,
          d.color,
          d.publicationUrl,
          d.createdBy,
          d.createdAt,
        ],
      );
      return [`atlas:${d.atlasId}`];
    }
    case 'BrainCreated':
    case 'BrainUpdated':
    case 'BrainDeleted':
    case 'BrainCollaboratorAdded':
    case 'BrainCollaboratorRoleChanged':
    case 'BrainCollaboratorRemoved':
    case 'EmbargoLifted':
      return countBrainFor(ctx, COUNTS, event, 'atlasId', 'atlas');
  }
}

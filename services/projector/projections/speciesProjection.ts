import { type Projection, type ProjectionContext, applyInRuns } from '#shared/projections/projection';
import type { SpeciesEvent } from '#shared/domain/species/events';
import type { AtlasEvent } from '#shared/domain/atlases/events';
import type { BrainCreated, BrainEvent } from '#shared/domain/brains/events';
import { type CounterSpec, countMemberFor, membershipTableSql } from '#shared/projections/memberCounts';
import { countBrainFor, countCreatedBrainsFor, isBrainCreated } from './brainMemberships';

type Handled = SpeciesEvent | AtlasEvent | BrainEvent;

const COUNTS: CounterSpec = {
  members: 'species_members',
  owners: 'species',
  counters: { atlas: 'atlases_count', brain: 'brains_count' },
};

/** Read model of species with exact brains_count and atlases_count (their brains come from the atlas). */
export const speciesProjection: Projection = {
  name: 'species',
  version: 1,
  tables: ['species', 'species_members'],
  eventTypes: new Set(['SpeciesCreated', 'AtlasCreated', 'BrainCreated', 'BrainUpdated', 'BrainDeleted']),

  async createTables({ client, table }) {
    await client.query(`
      CREATE TABLE ${table('species')} (
        id integer PRIMARY KEY,
        name text NOT NULL UNIQUE,
        scientific_name text NOT NULL,
        description text NOT NULL,
        category_id integer NOT NULL,
        created_at timestamptz NOT NULL,
        brains_count integer NOT NULL DEFAULT 0,
        atlases_count integer NOT NULL DEFAULT 0
      )`);
    await client.query(`CREATE UNIQUE INDEX ON ${table('species')} (lower(scientific_name))`);
    await client.query(`CREATE INDEX ON ${table('species')} (category_id)`);
    await client.query(membershipTableSql(table('species_members')));
  },

  apply: applyInRuns<Handled, BrainCreated>(
    isBrainCreated,
    (ctx, created) => countCreatedBrainsFor(ctx, COUNTS, created, 'speciesId', 'species'),
    applyOne,
  ),
};

async function applyOne(ctx: ProjectionContext, event: Handled): Promise<string[]> {
  switch (event.type) {
    case 'SpeciesCreated': {
      const d = event.data;
      await ctx.client.query(
        `INSERT INTO ${ctx.table('species')} (id, name, scientific_name, description, category_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [d.speciesId, d.name, d.scientificName, d.description, d.categoryId, d.createdAt],
      );
      return [`species:${d.speciesId}`];
    }
    case 'AtlasCreated':
      await countMemberFor(ctx, COUNTS, 'atlas', event.data.atlasId, event.data.speciesId);
      return [`species:${event.data.speciesId}`];
    case 'BrainCreated':
    case 'BrainUpdated':
    case 'BrainDeleted':
    case 'BrainCollaboratorAdded':
    case 'BrainCollaboratorRoleChanged':
    case 'BrainCollaboratorRemoved':
    case 'EmbargoLifted':
      return countBrainFor(ctx, COUNTS, event, 'speciesId', 'species');
  }
}

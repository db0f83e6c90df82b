import { type Projection, type ProjectionContext, applyInRuns } from '#shared/projections/projection';
import type { CategoryEvent } from '#shared/domain/categories/events';
import type { SpeciesEvent } from '#shared/domain/species/events';
import type { AtlasEvent } from '#shared/domain/atlases/events';
import type { BrainCreated, BrainEvent } from '#shared/domain/brains/events';
import { type CounterSpec, countMemberFor, membershipTableSql } from '#shared/projections/memberCounts';
import {
  PLACEMENT_EVENT_TYPES,
  countBrainFor,
  countCreatedBrainsFor,
  isBrainCreated,
} from './brainMemberships';

type Handled = CategoryEvent | SpeciesEvent | AtlasEvent | BrainEvent;

const COUNTS: CounterSpec = {
  members: 'category_members',
  owners: 'categories',
  counters: { atlas: 'atlases_count', brain: 'brains_count' },
};

/**
 * Read model of categories with exact brains_count and atlases_count. An atlas counts for the
 * category of its species, so the species' categories are kept here too.
 */
export const categoriesProjection: Projection = {
  name: 'categories',
  version: 1,
  tables: ['categories', 'category_members', 'category_species'],
  eventTypes: PLACEMENT_EVENT_TYPES,

  async createTables({ client, table }) {
    await client.query(`
      CREATE TABLE ${table('categories')} (
        id integer PRIMARY KEY,
        name text NOT NULL UNIQUE,
        description text NOT NULL,
        image_key text,
        image_url text,
        created_at timestamptz NOT NULL,
        brains_count integer NOT NULL DEFAULT 0,
        atlases_count integer NOT NULL DEFAULT 0
      )`);
    await client.query(membershipTableSql(table('category_members')));
    await client.query(
      `CREATE TABLE ${table('category_species')} (species_id integer PRIMARY KEY, category_id integer NOT NULL)`,
    );
  },

  apply: applyInRuns<Handled, BrainCreated>(
    isBrainCreated,
    (ctx, created) => countCreatedBrainsFor(ctx, COUNTS, created, 'categoryId', 'category'),
    applyOne,
  ),
};

async function applyOne(ctx: ProjectionContext, event: Handled): Promise<string[]> {
  const { client, table } = ctx;
  switch (event.type) {
    case 'CategoryCreated': {
      const d = event.data;
      await client.query(
        `INSERT INTO ${table('categories')} (id, name, description, image_key, image_url, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [d.categoryId, d.name, d.description, d.imageKey, d.imageUrl, d.createdAt],
      );
      return [`category:${d.categoryId}`];
    }
    case 'SpeciesCreated':
      await client.query(
        `INSERT INTO ${table('category_species')} (species_id, category_id) VALUES ($1, $2)`,
        [event.data.speciesId, event.data.categoryId],
      );
      return [];
    case 'AtlasCreated': {
      const { rows } = await client.query<{ category_id: number }>(
        `SELECT category_id FROM ${table('category_species')} WHERE species_id = $1`,
        [event.data.speciesId],
      );
      await countMemberFor(ctx, COUNTS, 'atlas', event.data.atlasId, rows[0]?.category_id ?? null);
      return rows[0] ? [`category:${rows[0].category_id}`] : [];
    }
    case 'BrainCreated':
    case 'BrainUpdated':
    case 'BrainDeleted':
    case 'BrainCollaboratorAdded':
    case 'BrainCollaboratorRoleChanged':
    case 'BrainCollaboratorRemoved':
    case 'EmbargoLifted':
      return countBrainFor(ctx, COUNTS, event, 'categoryId', 'category');
  }
}

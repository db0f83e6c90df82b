import { createHash, randomUUID } from 'node:crypto';
import type { NewEvent } from '#shared/eventStore/eventStore';
import type { AtlasCreated } from '#shared/domain/atlases/events';
import type { CategoryCreated } from '#shared/domain/categories/events';
import type { SpeciesCreated } from '#shared/domain/species/events';
import {
  type SyntheticAppend,
  type SyntheticPlacement,
  type SyntheticPlan,
  syntheticBrainAppends,
} from '#services/command-api/seedSynthetic/syntheticBrains';
import { userRegistered } from './benchEvents';

/**
 * A generated catalogue, deterministic for a given size: what the commands would have written for
 * it (the same event types, data and metadata), as (stream, events) appends.
 */
export type CatalogueAppend = SyntheticAppend;

export const CATEGORIES = ['mri', 'histology', 'light-sheet', 'electron microscopy', 'ct', 'dti'];
/** [scientific name, common name, category index]: the species the list is filtered by. */
export const SPECIES: readonly (readonly [string, string, number])[] = [
  ['Mus musculus', 'house mouse', 2],
  ['Rattus norvegicus', 'brown rat', 1],
  ['Homo sapiens', 'human', 0],
  ['Macaca mulatta', 'rhesus macaque', 0],
  ['Danio rerio', 'zebrafish', 2],
  ['Callithrix jacchus', 'common marmoset', 1],
  ['Mustela furo', 'ferret', 1],
  ['Sus scrofa', 'pig', 4],
];
const ATLASES_PER_SPECIES = 5;
export const USERS = 500;
/** A word that occurs in about one brain name in REGIONS.length (seedSynthetic/syntheticBrains.ts; for `search=`). */
export const SEARCH_WORD = 'hippocampus';
/** Uploads every five minutes from 2016 on, so newer brains have higher ids, as in production. */
const FIRST_UPLOAD = Date.UTC(2016, 0, 1);
const UPLOAD_EVERY_MS = 5 * 60 * 1000;

const STAFF = 1;

function metadata(actor: number | 'system'): NewEvent['metadata'] {
  return {
    actor: String(actor),
    requestId: randomUUID(),
    correlationId: randomUUID(),
    causationId: null,
    schemaVersion: 1,
  };
}

function event(type: string, data: unknown, actor: number | 'system'): NewEvent {
  return { id: randomUUID(), type, data, metadata: metadata(actor) };
}

/** Users, categories, species and atlases: the reference data brains are filed under. */
export function referenceData(): CatalogueAppend[] {
  const now = new Date(FIRST_UPLOAD).toISOString();
  const appends: CatalogueAppend[] = [];
  for (let userId = 1; userId <= USERS; userId++)
    appends.push({ stream: `user-${userId}`, events: [userRegistered(userId)] });
  CATEGORIES.forEach((name, i) => {
    const data: CategoryCreated['data'] = {
      categoryId: i + 1,
      name,
      description: `Brains imaged by ${name}`,
      imageKey: null,
      imageUrl: null,
      createdBy: STAFF,
      createdAt: now,
    };
    appends.push({ stream: `category-${i + 1}`, events: [event('CategoryCreated', data, STAFF)] });
  });
  SPECIES.forEach(([scientificName, name, category], i) => {
    const data: SpeciesCreated['data'] = {
      speciesId: i + 1,
      name,
      scientificName,
      description: `${name} brains`,
      categoryId: category + 1,
      createdBy: STAFF,
      createdAt: now,
    };
    appends.push({ stream: `species-${i + 1}`, events: [event('SpeciesCreated', data, STAFF)] });
  });
  for (let atlasId = 1; atlasId <= atlasCount(); atlasId++) {
    const data: AtlasCreated['data'] = {
      atlasId,
      name: `Reference atlas ${atlasId}`,
      slug: `reference-atlas-${atlasId}-v1`,
      description: 'A generated reference atlas',
      speciesId: speciesOfAtlas(atlasId),
      isOfficial: atlasId % 2 === 0,
      verified: true,
      version: 'v1',
      color: '#336699',
      publicationUrl: `https://doi.org/10.0000/atlas.${atlasId}`,
      createdBy: STAFF,
      createdAt: now,
    };
    appends.push({ stream: `atlas-${atlasId}`, events: [event('AtlasCreated', data, STAFF)] });
  }
  return appends;
}

const atlasCount = (): number => SPECIES.length * ATLASES_PER_SPECIES;
const speciesOfAtlas = (atlasId: number): number => 1 + ((atlasId - 1) % SPECIES.length);
const categoryOfSpecies = (speciesId: number): number => SPECIES[speciesId - 1]![2] + 1;

/** The bench's placements: 80 % under an atlas (species and category derived from it), the rest under a category alone. */
const PLACEMENTS: readonly SyntheticPlacement[] = [
  ...Array.from({ length: 3 }, () =>
    Array.from({ length: atlasCount() }, (_, i) => {
      const speciesId = speciesOfAtlas(i + 1);
      return {
        atlasId: i + 1,
        speciesId,
        categoryId: categoryOfSpecies(speciesId),
        speciesName: SPECIES[speciesId - 1]![1],
      };
    }),
  ).flat(),
  ...Array.from({ length: 5 }, () =>
    CATEGORIES.map((_, i) => ({ atlasId: null, speciesId: null, categoryId: i + 1, speciesName: '' })),
  ).flat(),
];

/** The bench catalogue's files: recorded as received (not processed), their bytes not stored. */
const BENCH_PLAN: SyntheticPlan = {
  placements: PLACEMENTS,
  uploaders: Array.from({ length: USERS }, (_, i) => i + 1),
  files: [
    {
      filename: 'brain.nii.gz',
      sizeBytes: 50_000_000,
      sha256: createHash('sha256').update('brain.nii.gz').digest('hex'),
      mimeType: 'application/gzip',
      metadata: null,
      preview: false,
    },
  ],
  blobKeyOf: (uploadId) => `uploads/${uploadId}`,
  verifiedShare: 0.3,
  privateShare: 0,
  createdAt: (index) => new Date(FIRST_UPLOAD + (index + 1) * UPLOAD_EVERY_MS),
  processorId: 'bench',
};

/**
 * Brains `first`..`last` as a create writes each (the production generator of
 * `npm run seed -- --synthetic`, over the bench's reference data): the id allocations (one append
 * to `sequence-brain`), each file's upload record and each BrainCreated.
 */
export function brainAppends(first: number, last: number): CatalogueAppend[] {
  return syntheticBrainAppends(BENCH_PLAN, first, last);
}

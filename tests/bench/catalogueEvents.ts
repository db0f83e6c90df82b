import { createHash, randomUUID } from 'node:crypto';
import type { NewEvent } from '#shared/eventStore/eventStore';
import type { AtlasCreated } from '#shared/domain/atlases/events';
import type { BrainCreated } from '#shared/domain/brains/events';
import type { CategoryCreated } from '#shared/domain/categories/events';
import type { SpeciesCreated } from '#shared/domain/species/events';
import type { UploadReceived } from '#shared/domain/uploads/events';
import { readableIdFor } from '#shared/domain/naming/naming';
import { userRegistered } from './benchEvents';

/**
 * A generated catalogue, deterministic for a given size: what the commands would have written for
 * it (the same event types, data and metadata), as (stream, events) appends.
 */
export interface CatalogueAppend {
  readonly stream: string;
  readonly events: NewEvent[];
}

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
const REGIONS = ['hippocampus', 'cortex', 'cerebellum', 'striatum', 'thalamus', 'amygdala', 'brainstem'];
const QUALIFIERS = ['visual', 'motor', 'dorsal', 'ventral', 'adult', 'juvenile', 'left', 'right', 'whole'];
/** A word that occurs in about one brain name in REGIONS.length (for `search=`). */
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

/** Deterministic pseudo-random numbers in [0, 1): two runs generate the same catalogue. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const pick = <T>(random: () => number, values: readonly T[]): T =>
  values[Math.floor(random() * values.length)]!;

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

/**
 * Brains `first`..`last` as a create writes each: its id allocation (as one append of all of them
 * to `sequence-brain`), its file's upload record and its BrainCreated. 80 % are filed under an
 * atlas (species and category derived from it), the rest under a category alone.
 */
export function brainAppends(first: number, last: number): CatalogueAppend[] {
  const random = generator(first);
  const ids: NewEvent[] = [];
  const appends: CatalogueAppend[] = [];
  for (let brainId = first; brainId <= last; brainId++) {
    const uploaderId = 1 + Math.floor(random() * USERS);
    ids.push(event('IdAllocated', { sequence: 'brain', id: brainId }, uploaderId));
    const uploadId = randomUUID();
    const createdAt = new Date(FIRST_UPLOAD + brainId * UPLOAD_EVERY_MS);
    appends.push(
      { stream: `upload-${uploadId}`, events: [uploadReceived(uploadId, brainId, uploaderId, createdAt)] },
      {
        stream: `brain-${brainId}`,
        events: [brainCreated(random, brainId, uploadId, uploaderId, createdAt)],
      },
    );
  }
  return [{ stream: 'sequence-brain', events: ids }, ...appends];
}

function uploadReceived(uploadId: string, brainId: number, uploaderId: number, at: Date): NewEvent {
  const filename = `brain-${brainId}.nii.gz`;
  const data: UploadReceived['data'] = {
    uploadId,
    name: filename,
    filename,
    sizeBytes: 50_000_000 + brainId,
    sha256: createHash('sha256').update(filename).digest('hex'),
    mimeType: 'application/gzip',
    blobKey: `uploads/${uploadId}`,
    uploaderId,
    associatedBrainId: brainId,
    receivedAt: at.toISOString(),
  };
  return event('UploadReceived', data, uploaderId);
}

function brainCreated(
  random: () => number,
  brainId: number,
  uploadId: string,
  uploaderId: number,
  at: Date,
): NewEvent {
  const atlasId = random() < 0.8 ? 1 + Math.floor(random() * atlasCount()) : null;
  const speciesId = atlasId === null ? null : speciesOfAtlas(atlasId);
  const name = `${pick(random, QUALIFIERS)} ${pick(random, REGIONS)} ${brainId}`;
  const data: BrainCreated['data'] = {
    brainId,
    readableId: readableIdFor(name, brainId),
    uuid: randomUUID(),
    name,
    description: `${pick(random, QUALIFIERS)} section of the ${pick(random, REGIONS)}, stained and imaged`,
    atlasId,
    speciesId,
    categoryId:
      speciesId === null ? 1 + Math.floor(random() * CATEGORIES.length) : categoryOfSpecies(speciesId),
    isReference: random() < 0.02,
    extraLink: '',
    website: random() < 0.5 ? `https://lab${uploaderId}.example.org/brains/${brainId}` : '',
    color: '',
    verified: random() < 0.3,
    uploaderId,
    fileUploadId: uploadId,
    createdAt: at.toISOString(),
  };
  return event('BrainCreated', data, uploaderId);
}

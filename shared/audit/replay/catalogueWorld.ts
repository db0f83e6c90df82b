/**
 * What the brain, file upload and account replays fold: the state of every stream they read, each
 * with its domain's own evolve, dispatched by stream name. A brain's representation needs its file's
 * upload, and shape A its atlas, species, category and uploader; an upload's needs its uploader and
 * brain. Atlases, species and categories only ever have their create event, whose payload is their
 * state here (their deciders' states keep less than the views show).
 */
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { streamFold } from '#shared/eventStore/streamFold';
import {
  type BrainEvent,
  type BrainState,
  evolveBrain,
  initialBrainState,
} from '#shared/domain/brains/events';
import {
  type UploadEvent,
  type UploadState,
  evolveUpload,
  initialUploadState,
} from '#shared/domain/uploads/events';
import { type UserEvent, type UserState, evolveUser, initialUserState } from '#shared/domain/accounts/events';
import type { AtlasCreated } from '#shared/domain/atlases/events';
import type { SpeciesCreated } from '#shared/domain/species/events';
import type { CategoryCreated } from '#shared/domain/categories/events';

export interface CatalogueWorld {
  readonly brains: ReadonlyMap<number, BrainState>;
  readonly uploads: ReadonlyMap<string, UploadState>;
  readonly users: ReadonlyMap<number, UserState>;
  readonly atlases: ReadonlyMap<number, AtlasCreated['data']>;
  readonly species: ReadonlyMap<number, SpeciesCreated['data']>;
  readonly categories: ReadonlyMap<number, CategoryCreated['data']>;
}

export const emptyWorld = (): CatalogueWorld => ({
  brains: new Map(),
  uploads: new Map(),
  users: new Map(),
  atlases: new Map(),
  species: new Map(),
  categories: new Map(),
});

function withEntry<K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> {
  const next = new Map(map);
  next.set(key, value);
  return next;
}

/** The id after a stream's prefix ("brain-42" -> "42"); undefined for another stream. */
function idOf(streamName: string, prefix: string): string | undefined {
  return streamName.startsWith(prefix) && streamName.length > prefix.length
    ? streamName.slice(prefix.length)
    : undefined;
}

const numeric = (id: string | undefined): number | undefined =>
  id !== undefined && /^\d{1,10}$/.test(id) ? Number(id) : undefined;

/** One event folded into the stream it belongs to; events of other streams change nothing. */
export function evolveWorld(world: CatalogueWorld, event: RecordedEvent): CatalogueWorld {
  const { streamName } = event;
  const brainId = numeric(idOf(streamName, 'brain-'));
  if (brainId !== undefined) {
    const state = world.brains.get(brainId) ?? initialBrainState();
    return {
      ...world,
      brains: withEntry(world.brains, brainId, evolveBrain(state, event as unknown as BrainEvent)),
    };
  }
  const uploadId = idOf(streamName, 'upload-');
  if (uploadId !== undefined) {
    const state = world.uploads.get(uploadId) ?? initialUploadState();
    const next = evolveUpload(state, event as unknown as UploadEvent);
    return { ...world, uploads: withEntry(world.uploads, uploadId, next) };
  }
  const userId = numeric(idOf(streamName, 'user-'));
  if (userId !== undefined) {
    const state = world.users.get(userId) ?? initialUserState();
    return {
      ...world,
      users: withEntry(world.users, userId, evolveUser(state, event as unknown as UserEvent)),
    };
  }
  const created = (prefix: string, type: string) =>
    event.type === type ? numeric(idOf(streamName, prefix)) : undefined;
  const atlasId = created('atlas-', 'AtlasCreated');
  if (atlasId !== undefined)
    return { ...world, atlases: withEntry(world.atlases, atlasId, event.data as AtlasCreated['data']) };
  const speciesId = created('species-', 'SpeciesCreated');
  if (speciesId !== undefined)
    return { ...world, species: withEntry(world.species, speciesId, event.data as SpeciesCreated['data']) };
  const categoryId = created('category-', 'CategoryCreated');
  if (categoryId !== undefined)
    return {
      ...world,
      categories: withEntry(world.categories, categoryId, event.data as CategoryCreated['data']),
    };
  return world;
}

/**
 * The world of one stream's events (from its first revision), remembered per event (streamFold):
 * the as_of requests of one resource share the fold of its stream.
 */
export const worldOfStream = streamFold(emptyWorld, evolveWorld);

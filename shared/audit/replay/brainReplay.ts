/**
 * A brain as the detail route shows it, rebuilt from its stream and the streams it shows: its file's
 * upload (file name, processing metadata, preview) and, for shape A, its atlas, species, category
 * and uploader. The rows are those the read models would hold (brainsProjection, uploadsProjection
 * joined as brainSql does), so the existing views build the representation.
 */
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import type { ActiveBrain, BrainCreated } from '#shared/domain/brains/events';
import { isLiveUpload, uploadStreamName } from '#shared/domain/uploads/events';
import { userStreamName } from '#shared/domain/accounts/events';
import { atlasStreamName } from '#shared/domain/atlases/events';
import { speciesStreamName } from '#shared/domain/species/events';
import { categoryStreamName } from '#shared/domain/categories/events';
import {
  type BrainARow,
  type BrainShape,
  type BrainView,
  brainJson,
  visibilityFields,
  brainRowOfState,
  brainShapeB,
} from '#shared/views/brainViews';
import type { Replay } from './timeline';
import { type CatalogueWorld, emptyWorld, evolveWorld } from './catalogueWorld';

/** The brain, when it exists in the world (created and not deleted). */
export function activeBrain(world: CatalogueWorld, brainId: number): ActiveBrain | undefined {
  const state = world.brains.get(brainId);
  return state?.status === 'active' ? state : undefined;
}

/** The read-model row of the brain with what it shows, as of the world; undefined when it does not exist. */
export function brainRowAt(world: CatalogueWorld, brainId: number): BrainARow | undefined {
  const brain = activeBrain(world, brainId);
  if (!brain) return undefined;
  const fileId = brain.fileUploadIds[0];
  const upload = fileId === undefined ? undefined : world.uploads.get(fileId);
  const file = upload && isLiveUpload(upload) ? upload : undefined;
  const atlas = brain.atlasId === null ? undefined : world.atlases.get(brain.atlasId);
  const species = brain.speciesId === null ? undefined : world.species.get(brain.speciesId);
  const uploader = world.users.get(brain.uploaderId);
  const registered = uploader?.status === 'registered' ? uploader : undefined;
  return {
    ...brainRowOfState(brain, file?.filename ?? null),
    description: brain.description,
    color: brain.color,
    file_size_bytes: file?.sizeBytes ?? null,
    file_metadata: file?.metadata ?? null,
    // A failed upload has no preview (uploadsProjection clears it).
    file_preview_key: file && file.status !== 'failed' ? file.previewBlobKey : null,
    atlas_name: atlas?.name ?? null,
    atlas_slug: atlas?.slug ?? null,
    atlas_description: atlas?.description ?? null,
    species_id: brain.speciesId,
    species_name: species?.name ?? null,
    scientific_name: species?.scientificName ?? null,
    category_name: world.categories.get(brain.categoryId)?.name ?? null,
    uploader_username: registered?.username ?? null,
    uploader_email: registered?.email ?? null,
  };
}

/** A brain's collaborators as its history shows them: by user id, with their role. */
export const collaboratorsOf = (brain: ActiveBrain): Array<{ user: number; role: string }> =>
  Object.entries(brain.collaborators)
    .map(([user, { role }]) => ({ user: Number(user), role }))
    .sort((a, b) => a.user - b.user);

/**
 * Shape B of the brain through its history (what history `changes` compare), with two things an
 * auditor asks of it: `visibility` as it was recorded (an embargo reads embargoed until its
 * EmbargoLifted, which then shows as the change to public, whatever the time is now), and
 * `collaborators` (who was given or lost access, and with which role).
 */
export const brainShapeBReplay = (brainId: number, baseUrl: string): Replay<CatalogueWorld> => ({
  initial: emptyWorld,
  evolve: evolveWorld,
  represent: (world) => {
    const row = brainRowAt(world, brainId);
    const brain = activeBrain(world, brainId);
    return (
      row &&
      brain && {
        ...brainShapeB(row, baseUrl),
        visibility: brain.visibility,
        collaborators: collaboratorsOf(brain),
      }
    );
  },
});

/**
 * The brain in the asked shape as of the world; undefined when it does not exist. `atMs`: the time
 * the world is as of, which decides whether an embargo had ended then (not whether it has now).
 */
export function brainJsonAt(
  world: CatalogueWorld,
  brainId: number,
  shape: BrainShape,
  view: BrainView,
  atMs: number,
) {
  const row = brainRowAt(world, brainId);
  return row && { ...brainJson(shape, row, view), ...visibilityFields(row, atMs) };
}

/** The create event of a brain's stream, when it has one. */
export const brainCreatedIn = (events: readonly RecordedEvent[]): BrainCreated['data'] | undefined =>
  events.find((event) => event.type === 'BrainCreated')?.data as BrainCreated['data'] | undefined;

/**
 * The brain id a readable_id names: readableIdFor ends it with "-<id>" (naming.ts). Whether the brain
 * really has that readable_id is for its BrainCreated to say.
 */
export function brainIdOfReadableId(key: string): number | undefined {
  const match = /-([1-9]\d{0,9})$/.exec(key);
  const id = match ? Number(match[1]) : undefined;
  return id !== undefined && id <= 2_147_483_647 ? id : undefined;
}

/** Whether a brain stream's events are those of the brain this readable_id names (case-insensitively). */
export const hasReadableId = (events: readonly RecordedEvent[], key: string): boolean =>
  brainCreatedIn(events)?.readableId === key.toLowerCase();

/**
 * The other streams the brain's representation shows, given its state: its file's upload and, for
 * shape A, its atlas, species, category and uploader (whose username and email only its first
 * event, UserRegistered, sets: the rest of a user stream is not needed).
 */
export function streamsShownBy(
  brain: ActiveBrain,
  shape: BrainShape,
): Array<{ name: string; firstOnly: boolean }> {
  const fileId = brain.fileUploadIds[0];
  const streams = fileId === undefined ? [] : [{ name: uploadStreamName(fileId), firstOnly: false }];
  if (shape === 'b') return streams;
  if (brain.atlasId !== null) streams.push({ name: atlasStreamName(brain.atlasId), firstOnly: false });
  if (brain.speciesId !== null) streams.push({ name: speciesStreamName(brain.speciesId), firstOnly: false });
  streams.push({ name: categoryStreamName(brain.categoryId), firstOnly: false });
  streams.push({ name: userStreamName(brain.uploaderId), firstOnly: true });
  return streams;
}

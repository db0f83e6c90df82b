import { randomUUID } from 'node:crypto';
import type { NewEvent } from '#shared/eventStore/eventStore';
import type { BrainCreated } from '#shared/domain/brains/events';
import type { Visibility } from '#shared/domain/brains/visibility';
import type {
  UploadProcessingCompleted,
  UploadProcessingStarted,
  UploadReceived,
} from '#shared/domain/uploads/events';
import { uploadPreviewKey } from '#shared/domain/uploads/events';
import { readableIdFor } from '#shared/domain/naming/naming';

/** One append of a synthetic catalogue: a stream and the events a command would append to it. */
export interface SyntheticAppend {
  readonly stream: string;
  readonly events: NewEvent[];
}

/** Where a synthetic brain is filed: an atlas (species and category derived from it), or a category alone. */
export interface SyntheticPlacement {
  readonly atlasId: number | null;
  readonly speciesId: number | null;
  readonly categoryId: number;
  /** The species' common name ("house mouse"), used in names and descriptions; "" without one. */
  readonly speciesName: string;
}

/** A file every synthetic brain of it shares the content of (stored once, see syntheticFiles.ts). */
export interface SyntheticFile {
  readonly filename: string;
  readonly sizeBytes: number;
  readonly sha256: string;
  readonly mimeType: string;
  /** What processing reads from it; null: the upload stays `uploaded` (the processor will process it). */
  readonly metadata: (Readonly<Record<string, unknown>> & { readonly format: string }) | null;
  /** Whether a PNG preview is stored for each upload (at uploadPreviewKey). */
  readonly preview: boolean;
}

export interface SyntheticPlan {
  /** Drawn uniformly for each brain. */
  readonly placements: readonly SyntheticPlacement[];
  /** User ids the brains' uploaders are drawn from. */
  readonly uploaders: readonly number[];
  readonly files: readonly SyntheticFile[];
  /** The blob key of an upload's bytes. */
  readonly blobKeyOf: (uploadId: string) => string;
  /** Share of verified brains (0..1). */
  readonly verifiedShare: number;
  /** Share of private brains (0..1); the rest are public. */
  readonly privateShare: number;
  /** createdAt of the run's brain number `index` (0-based). */
  readonly createdAt: (index: number) => Date;
  /** The processor id the processing events name (they say who processed the upload). */
  readonly processorId: string;
}

/** Anatomical terms brain names are made of: one region in REGIONS.length contains each word. */
export const REGIONS = [
  'hippocampus',
  'cortex',
  'cerebellum',
  'striatum',
  'thalamus',
  'amygdala',
  'brainstem',
  'hypothalamus',
  'olfactory bulb',
  'corpus callosum',
  'substantia nigra',
  'entorhinal cortex',
] as const;
export const QUALIFIERS = [
  'visual',
  'motor',
  'somatosensory',
  'dorsal',
  'ventral',
  'anterior',
  'posterior',
  'adult',
  'juvenile',
  'left',
  'right',
  'whole',
] as const;
const MODALITIES = [
  'T1-weighted MRI',
  'T2-weighted MRI',
  'diffusion MRI',
  'Nissl-stained sections',
  'light-sheet volume of a cleared brain',
  'two-photon serial tomography',
  'micro-CT',
  'immunofluorescence sections',
] as const;
const STAINS = ['Nissl', 'DAPI', 'GFAP', 'NeuN', 'myelin', 'parvalbumin', 'c-Fos', 'unstained'] as const;
const RESOLUTIONS = [5, 10, 20, 25, 50, 100, 200] as const;

/** Deterministic pseudo-random numbers in [0, 1) (a linear congruential generator). */
export function generator(seed: number): () => number {
  let state = seed % 2 ** 31;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

export const pick = <T>(random: () => number, values: readonly T[]): T =>
  values[Math.floor(random() * values.length)]!;

function event(type: string, data: unknown, actor: number | string): NewEvent {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: {
      actor: String(actor),
      requestId: randomUUID(),
      correlationId: randomUUID(),
      causationId: null,
      schemaVersion: 1,
    },
  };
}

/** A brain's name, description and flags: what a person would have typed into the create form. */
export interface SyntheticText {
  readonly name: string;
  readonly description: string;
}

export function syntheticText(random: () => number, brainId: number, speciesName: string): SyntheticText {
  const qualifier = pick(random, QUALIFIERS);
  const region = pick(random, REGIONS);
  const of = speciesName ? `, ${speciesName}` : '';
  const modality = pick(random, MODALITIES);
  const stain = pick(random, STAINS);
  const resolution = pick(random, RESOLUTIONS);
  return {
    name: `${qualifier} ${region}${of} ${brainId}`,
    description:
      `${modality[0]!.toUpperCase()}${modality.slice(1)} of the ${pick(random, QUALIFIERS)} ${pick(random, REGIONS)}` +
      `${speciesName ? ` of a ${speciesName}` : ''}; ${stain}, ${resolution} µm.`,
  };
}

/**
 * Brains `first`..`last` as a create with a file writes them (IdAllocated, UploadReceived,
 * BrainCreated, with the same data and metadata), plus, for files with metadata, the processor's
 * UploadProcessingStarted and UploadProcessingCompleted. Brain n's text and placement are drawn
 * from numbers seeded by n, so the same id gives the same brain in any chunk. The first append is the id allocations
 * (one append to `sequence-brain`), to be appended at the revision before `first`.
 */
export function syntheticBrainAppends(
  plan: SyntheticPlan,
  first: number,
  last: number,
  /** The run's index of brain `first` (createdAt); by default its id - 1. */
  indexOfFirst = first - 1,
): SyntheticAppend[] {
  const ids: NewEvent[] = [];
  const appends: SyntheticAppend[] = [];
  for (let brainId = first; brainId <= last; brainId++) {
    // One generator per brain: brain n is the same whatever chunk it is written in.
    const random = generator(brainId * 7919 + 17);
    const uploaderId = pick(random, plan.uploaders);
    const placement = pick(random, plan.placements);
    const file = pick(random, plan.files);
    const at = plan.createdAt(indexOfFirst + brainId - first);
    ids.push(event('IdAllocated', { sequence: 'brain', id: brainId }, uploaderId));
    const uploadId = randomUUID();
    appends.push(
      { stream: `upload-${uploadId}`, events: uploadEvents(plan, file, uploadId, brainId, uploaderId, at) },
      {
        stream: `brain-${brainId}`,
        events: [brainCreated(plan, random, brainId, placement, uploadId, uploaderId, at)],
      },
    );
  }
  return [{ stream: 'sequence-brain', events: ids }, ...appends];
}

function uploadEvents(
  plan: SyntheticPlan,
  file: SyntheticFile,
  uploadId: string,
  brainId: number,
  uploaderId: number,
  at: Date,
): NewEvent[] {
  const received: UploadReceived['data'] = {
    uploadId,
    name: file.filename,
    filename: file.filename,
    sizeBytes: file.sizeBytes,
    sha256: file.sha256,
    mimeType: file.mimeType,
    blobKey: plan.blobKeyOf(uploadId),
    uploaderId,
    associatedBrainId: brainId,
    receivedAt: at.toISOString(),
  };
  const events = [event('UploadReceived', received, uploaderId)];
  if (!file.metadata) return events;
  const processedAt = new Date(at.getTime() + 1000).toISOString();
  const started: UploadProcessingStarted['data'] = {
    uploadId,
    attempt: 1,
    processorId: plan.processorId,
    leaseUntil: new Date(at.getTime() + 61_000).toISOString(),
    startedAt: processedAt,
  };
  const completed: UploadProcessingCompleted['data'] = {
    uploadId,
    attempt: 1,
    metadata: file.metadata,
    previewBlobKey: file.preview ? uploadPreviewKey(uploadId) : null,
    completedAt: processedAt,
  };
  events.push(
    event('UploadProcessingStarted', started, 'upload-processor'),
    event('UploadProcessingCompleted', completed, 'upload-processor'),
  );
  return events;
}

function brainCreated(
  plan: SyntheticPlan,
  random: () => number,
  brainId: number,
  placement: SyntheticPlacement,
  uploadId: string,
  uploaderId: number,
  at: Date,
): NewEvent {
  const text = syntheticText(random, brainId, placement.speciesName);
  const visibility: Visibility = random() < plan.privateShare ? 'private' : 'public';
  const data: BrainCreated['data'] = {
    brainId,
    readableId: readableIdFor(text.name, brainId),
    uuid: randomUUID(),
    name: text.name,
    description: text.description,
    atlasId: placement.atlasId,
    speciesId: placement.speciesId,
    categoryId: placement.categoryId,
    isReference: random() < 0.02,
    extraLink: '',
    website: random() < 0.5 ? `https://lab${uploaderId}.example.org/brains/${brainId}` : '',
    color: '',
    verified: random() < plan.verifiedShare,
    visibility,
    embargoUntil: null,
    uploaderId,
    fileUploadId: uploadId,
    createdAt: at.toISOString(),
  };
  return event('BrainCreated', data, uploaderId);
}

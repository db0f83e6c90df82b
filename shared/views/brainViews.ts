/** JSON representations of a brain: shape A (catalogue) and shape B (detail), interface-spec 2.7. */
import type { ActiveBrain } from '#shared/domain/brains/events';
import { uploadExtension } from '#shared/domain/uploads/fileRules';
import { type Visibility, VISIBILITIES, effectiveVisibility } from '#shared/domain/brains/visibility';

/** What shape B needs: the brain row and the name of its file. */
export interface BrainBRow {
  readonly id: number;
  readonly readable_id: string;
  readonly uuid: string;
  readonly name: string;
  readonly date_uploaded: Date | string;
  readonly website: string;
  readonly verified: boolean;
  readonly category_id: number;
  readonly uploader_id: number;
  readonly atlas_id: number | null;
  readonly is_reference: boolean;
  readonly extra_link: string;
  /** As stored: an embargo past its time is still `embargoed` until EmbargoLifted is projected. */
  readonly visibility: Visibility;
  readonly embargo_until: Date | string | null;
  /** The original name of the brain's file; null when it has none. */
  readonly file_name: string | null;
  /**
   * The processing metadata of the brain's file and the key of its preview, as the read model has
   * them (null without a file). Absent where they are not known (a command's reply): then the
   * representation leaves out preview_url and metadata rather than guess them.
   */
  readonly file_metadata?: Readonly<Record<string, unknown>> | null;
  readonly file_preview_key?: string | null;
}

/** What shape A adds: the nested atlas, species and uploader, and the file size. */
export interface BrainARow extends BrainBRow {
  readonly description: string;
  readonly color: string;
  readonly atlas_name: string | null;
  readonly atlas_slug: string | null;
  readonly atlas_description: string | null;
  readonly species_id: number | null;
  readonly species_name: string | null;
  readonly scientific_name: string | null;
  readonly category_name: string | null;
  readonly uploader_username: string | null;
  readonly uploader_email: string | null;
  readonly file_size_bytes: string | number | null;
}

/**
 * The row fields a brain's own state gives, as brainsProjection stores them: what a command's reply
 * (shape B) and the audit replays build their rows from. `fileName`: its file's original name.
 */
export function brainRowOfState(brain: ActiveBrain, fileName: string | null): BrainBRow {
  return {
    id: brain.brainId,
    readable_id: brain.readableId,
    uuid: brain.uuid,
    name: brain.name,
    date_uploaded: brain.createdAt,
    website: brain.website,
    verified: brain.verified,
    category_id: brain.categoryId,
    uploader_id: brain.uploaderId,
    atlas_id: brain.atlasId,
    is_reference: brain.isReference,
    extra_link: brain.extraLink,
    visibility: brain.visibility,
    embargo_until: brain.embargoUntil,
    file_name: fileName,
  };
}

/**
 * `visibility` and `embargo_until` as both shapes show them: an embargo whose time has passed
 * reads as public, its embargo_until kept (decisions.md).
 */
export function visibilityFields(b: Pick<BrainBRow, 'visibility' | 'embargo_until'>, nowMs = Date.now()) {
  const embargoUntil = b.embargo_until === null ? null : new Date(b.embargo_until).toISOString();
  return {
    visibility: effectiveVisibility({ visibility: b.visibility, embargoUntil }, nowMs),
    embargo_until: embargoUntil,
  };
}

export type BrainShape = 'a' | 'b';

const MiB = 2 ** 20;
const iso = (d: Date | string): string => new Date(d).toISOString();

/** The public route that streams a brain's file from the BlobStore. */
export const brainFileUrl = (baseUrl: string, brainId: number): string =>
  `${baseUrl}/api/brains/${brainId}/file/`;

/** The public route that serves the PNG preview of a brain's file. */
export const brainPreviewUrl = (baseUrl: string, brainId: number): string =>
  `${baseUrl}/api/brains/${brainId}/preview/`;

/** Beyond both documented shapes: the file's preview_url (null until one exists) and metadata. */
function fileExtras(b: BrainBRow, baseUrl: string) {
  if (b.file_metadata === undefined) return {};
  return {
    preview_url: b.file_preview_key ? brainPreviewUrl(baseUrl, b.id) : null,
    metadata: b.file_metadata ?? {},
  };
}

export function brainShapeB(b: BrainBRow, baseUrl: string) {
  const fileUrl = b.file_name === null ? '' : brainFileUrl(baseUrl, b.id);
  return {
    id: b.id,
    name: b.name,
    date_uploaded: iso(b.date_uploaded),
    image: fileUrl,
    website: b.website,
    verified: b.verified,
    category: b.category_id,
    uploader: b.uploader_id,
    atlas: b.atlas_id,
    uuid: b.uuid,
    zarr_file: b.file_name !== null && uploadExtension(b.file_name) === '.zarr' ? fileUrl : '',
    is_reference: b.is_reference,
    extra_link: b.extra_link,
    readable_id: b.readable_id,
    s3_url: fileUrl,
    ...visibilityFields(b),
    ...fileExtras(b, baseUrl),
  };
}

/**
 * Who sees an uploader's email in shape A (UPLOADER_EMAIL_VISIBILITY). `everyone`, as
 * interface-spec 2.7 documents the field; `owner`: the uploader and staff see it, anyone else an
 * empty string (the field keeps its type).
 */
export type UploaderEmailVisibility = 'everyone' | 'owner';

/** Who a brain is represented for, and where its links point. */
export interface BrainView {
  readonly baseUrl: string;
  readonly viewer: { readonly userId: number; readonly isStaff: boolean } | undefined;
  readonly uploaderEmails: UploaderEmailVisibility;
}

function uploaderEmail(b: BrainARow, view: BrainView): string | null {
  if (view.uploaderEmails === 'everyone') return b.uploader_email;
  const { viewer } = view;
  return viewer && (viewer.isStaff || viewer.userId === b.uploader_id) ? b.uploader_email : '';
}

export function brainShapeA(b: BrainARow, view: BrainView) {
  const { baseUrl } = view;
  return {
    id: b.id,
    readable_id: b.readable_id,
    name: b.name,
    description: b.description,
    date_uploaded: iso(b.date_uploaded),
    verified: b.verified,
    color: b.color,
    atlas:
      b.atlas_id === null
        ? null
        : { id: b.atlas_id, name: b.atlas_name, slug: b.atlas_slug, description: b.atlas_description },
    species:
      b.species_id === null
        ? null
        : {
            id: b.species_id,
            name: b.species_name,
            scientific_name: b.scientific_name,
            category: { id: b.category_id, name: b.category_name },
          },
    uploader: { id: b.uploader_id, username: b.uploader_username, email: uploaderEmail(b, view) },
    uuid: b.uuid,
    is_reference: b.is_reference,
    file_size_mb: Math.round((Number(b.file_size_bytes ?? 0) / MiB) * 100) / 100,
    ...visibilityFields(b),
    ...fileExtras(b, baseUrl),
  };
}

export const brainJson = (shape: BrainShape, b: BrainARow, view: BrainView) =>
  shape === 'a' ? brainShapeA(b, view) : brainShapeB(b, view.baseUrl);

const nullableRef = (properties: Record<string, unknown>) => ({
  type: ['object', 'null'],
  properties,
});

const fileExtraProperties = {
  preview_url: {
    type: ['string', 'null'],
    description:
      "Beyond the spec: PNG preview of the brain's file (GET /api/brains/{id}/preview/); null until one exists.",
  },
  metadata: {
    type: 'object',
    description:
      "Beyond the spec: the processing metadata of the brain's file ({} until processed, {error} when it failed).",
  },
} as const;

/** decisions.md "Visibility and collaborators". */
const visibilityProperties = {
  visibility: {
    type: 'string',
    enum: [...VISIBILITIES],
    description:
      'public (the default), private (uploader, collaborators and staff only) or embargoed (so until embargo_until, then public).',
  },
  embargo_until: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'When the embargo ends; kept after it has ended, null unless the brain was embargoed.',
  },
} as const;

export const brainShapeBSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'date_uploaded',
    'image',
    'website',
    'verified',
    'category',
    'uploader',
    'atlas',
    'uuid',
    'zarr_file',
    'is_reference',
    'extra_link',
    'readable_id',
    's3_url',
    'visibility',
    'embargo_until',
  ],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    date_uploaded: { type: 'string', format: 'date-time' },
    image: { type: 'string', description: "URL of the brain's file (GET /api/brains/{id}/file/)." },
    website: { type: 'string', description: '"" when absent.' },
    verified: { type: 'boolean' },
    category: { type: 'integer' },
    uploader: { type: 'integer' },
    atlas: { type: ['integer', 'null'], description: 'null for a brain filed under a category only.' },
    uuid: { type: 'string', format: 'uuid' },
    zarr_file: { type: 'string', description: 'URL of the file when it is a Zarr archive, else "".' },
    is_reference: { type: 'boolean' },
    extra_link: { type: 'string', description: '"" when absent.' },
    readable_id: { type: 'string' },
    s3_url: { type: 'string', description: "URL of the brain's file." },
    ...visibilityProperties,
    ...fileExtraProperties,
  },
} as const;

export const brainShapeASchema = {
  type: 'object',
  required: [
    'id',
    'readable_id',
    'name',
    'description',
    'date_uploaded',
    'verified',
    'color',
    'atlas',
    'species',
    'uploader',
    'uuid',
    'is_reference',
    'file_size_mb',
    'visibility',
    'embargo_until',
  ],
  properties: {
    id: { type: 'integer' },
    readable_id: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    date_uploaded: { type: 'string', format: 'date-time' },
    verified: { type: 'boolean' },
    color: { type: 'string', description: '#rrggbb, or "".' },
    atlas: nullableRef({
      id: { type: 'integer' },
      name: { type: 'string' },
      slug: { type: 'string' },
      description: { type: 'string' },
    }),
    species: nullableRef({
      id: { type: 'integer' },
      name: { type: 'string' },
      scientific_name: { type: 'string' },
      category: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
    }),
    uploader: {
      type: 'object',
      properties: { id: { type: 'integer' }, username: { type: 'string' }, email: { type: 'string' } },
    },
    uuid: { type: 'string', format: 'uuid' },
    is_reference: { type: 'boolean' },
    file_size_mb: { type: 'number' },
    ...visibilityProperties,
    ...fileExtraProperties,
  },
} as const;

export const brainSchema = { oneOf: [brainShapeASchema, brainShapeBSchema] };

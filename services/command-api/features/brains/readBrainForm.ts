import { Type } from '@sinclair/typebox';
import type { RequestContext } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { compileFormValidator } from '#shared/http/schemaValidator';
import { type StoredFile, cleanupStoredFiles, parseMultipart } from '#shared/multipart/parseMultipart';
import type { BidsSidecar } from '#shared/domain/uploads/sidecar';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { uploadFileSpec } from '#services/command-api/features/uploads/uploadFileSpec';
import { readSidecar } from '#services/command-api/features/uploads/readSidecar';
import { type BrainBody, brainFields, brainJsonFields, brainName } from './brainFields';

export const FILE_REQUIRED =
  'Provide the brain file as `file` (.nii, .nii.gz, .zarr, .tif, .tiff) or `image` (TIFF) in multipart/form-data, or give `upload`: the id of one of your file uploads.';
export const ONE_FILE = 'Send one file, as `file` or `image`, not both.';
export const FILE_OR_UPLOAD =
  'Send either a file (`file` or `image`) or `upload` (a file upload id), not both.';
export const FILE_NEEDS_MULTIPART =
  'A file can only be sent in multipart/form-data; in this body give `upload`: the id of one of your file uploads.';

/** Sidecars up to 64 KiB as JSON may be sent pretty-printed: the form field itself may be larger. */
const MAX_FORM_FIELD_BYTES = 1024 * 1024;

const uploadField = Type.String({
  format: 'uuid',
  description:
    "The id of one of your own file uploads (POST /api/file-uploads/ or tus), not yet a brain's file and not failed, used as the brain's file instead of sending it again.",
});

const sidecarDescription =
  "A BIDS JSON sidecar (a JSON object, at most 64 KiB as JSON), kept with the file upload and merged into its metadata once processing completes (the values read from the file win a clash; metadata.sidecar_keys lists the sidecar's keys).";

const createFields = {
  ...brainFields,
  name: brainName,
  upload: Type.Optional(uploadField),
  sidecar: Type.Optional(Type.String({ description: `${sidecarDescription} As JSON text.` })),
};

export const brainFormSchema = Type.Object({
  ...createFields,
  file: Type.Optional(
    Type.String({ format: 'binary', description: '.nii, .nii.gz, .zarr (zip), .tif or .tiff.' }),
  ),
  image: Type.Optional(Type.String({ format: 'binary', description: 'TIFF only (.tif, .tiff).' })),
});

/** The JSON create: the brain's fields and `upload` (a file cannot travel in JSON). */
export const brainJsonCreateSchema = Type.Object({
  ...brainJsonFields,
  name: brainName,
  upload: Type.Optional(uploadField),
  sidecar: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: `${sidecarDescription} As an object.` }),
  ),
});

const validateCreateFields = compileFormValidator(Type.Object(createFields));
const validateUpdateFields = compileFormValidator(Type.Object(brainFields));

/** A form cannot send null: an empty embargo_until is taken as not sent. */
function withoutBlankEmbargo(fields: Record<string, unknown>): void {
  if (typeof fields.embargo_until === 'string' && fields.embargo_until.trim() === '')
    delete fields.embargo_until;
}

/** A create's brain fields with where its file comes from: a file just stored, or an upload's id. */
export type CreateForm = {
  readonly fields: BrainBody;
  readonly sidecar: BidsSidecar | null;
} & (
  | { readonly file: StoredFile; readonly upload?: undefined }
  | { readonly file?: undefined; readonly upload: string }
);

/**
 * Streams a brain's create form: its file goes straight to the BlobStore (hashed and size-limited
 * on the way); on any invalid field the stored file is deleted again. Instead of a file, `upload`
 * may name one of the caller's file uploads.
 */
export async function readCreateForm(ctx: RequestContext<unknown>, deps: CommandDeps): Promise<CreateForm> {
  const parsed = await parseMultipart(ctx.req, {
    blobStore: deps.blobs,
    files: {
      file: uploadFileSpec('file', deps.maxUploadBytes),
      image: uploadFileSpec('image', deps.maxUploadBytes),
    },
    maxFieldBytes: MAX_FORM_FIELD_BYTES,
  });
  const { file, image } = parsed.files;
  withoutBlankEmbargo(parsed.fields);
  const errors = { ...validateCreateFields(parsed.fields) };
  // Ids are compared in one form (JSON bodies get this from the dispatcher).
  const upload = parsed.fields.upload?.toLowerCase();
  if (!file && !image && upload === undefined) errors.file = [FILE_REQUIRED];
  if (file && image) errors.non_field_errors = [ONE_FILE];
  else if ((file || image) && upload !== undefined) errors.non_field_errors = [FILE_OR_UPLOAD];
  const sidecar = readSidecar(parsed.fields.sidecar, errors);
  const stored = file ?? image;
  if (Object.keys(errors).length > 0 || (!stored && upload === undefined)) {
    await cleanupStoredFiles(deps.blobs, parsed.files);
    throw new ValidationError(errors);
  }
  const fields = parsed.fields as unknown as BrainBody;
  return stored ? { fields, sidecar, file: stored } : { fields, sidecar, upload: upload! };
}

/**
 * A create sent as JSON or url-encoded (already validated by the route's schemas): it can only
 * name an upload, a file needs multipart.
 */
export function readCreateBody(body: unknown): CreateForm {
  const fields = { ...(body as Record<string, unknown>) };
  withoutBlankEmbargo(fields);
  const errors: Record<string, string[]> = {};
  const upload = typeof fields.upload === 'string' ? fields.upload : undefined;
  if (fields.file !== undefined || fields.image !== undefined)
    errors[fields.file !== undefined ? 'file' : 'image'] = [FILE_NEEDS_MULTIPART];
  else if (upload === undefined) errors.upload = [FILE_REQUIRED];
  const sidecar = readSidecar(fields.sidecar, errors);
  if (Object.keys(errors).length > 0 || upload === undefined) throw new ValidationError(errors);
  return { fields: fields, sidecar, upload };
}

/** A multipart update carries text fields only: the file of a brain is not replaced this way. */
export async function readUpdateForm(ctx: RequestContext<unknown>, deps: CommandDeps): Promise<BrainBody> {
  const parsed = await parseMultipart(ctx.req, { blobStore: deps.blobs, files: {} });
  withoutBlankEmbargo(parsed.fields);
  const errors = validateUpdateFields(parsed.fields);
  if (errors) throw new ValidationError(errors);
  // The validator coerced the text values in place (integers, booleans).
  return parsed.fields;
}

import { Type } from '@sinclair/typebox';
import type { RequestContext } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { compileFormValidator } from '#shared/http/schemaValidator';
import { type StoredFile, cleanupStoredFiles, parseMultipart } from '#shared/multipart/parseMultipart';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { uploadFileSpec } from '#services/command-api/features/uploads/uploadFileSpec';
import { type BrainBody, brainFields, brainName } from './brainFields';

export const FILE_REQUIRED =
  'Provide the brain file as `file` (.nii, .nii.gz, .zarr, .tif, .tiff) or `image` (TIFF).';
export const ONE_FILE = 'Send one file, as `file` or `image`, not both.';

export const brainFormSchema = Type.Object({
  ...brainFields,
  name: brainName,
  file: Type.Optional(
    Type.String({ format: 'binary', description: '.nii, .nii.gz, .zarr (zip), .tif or .tiff.' }),
  ),
  image: Type.Optional(Type.String({ format: 'binary', description: 'TIFF only (.tif, .tiff).' })),
});

const validateCreateFields = compileFormValidator(Type.Object({ ...brainFields, name: brainName }));
const validateUpdateFields = compileFormValidator(Type.Object(brainFields));

/** A form cannot send null: an empty embargo_until is taken as not sent. */
function withoutBlankEmbargo(fields: Record<string, unknown>): void {
  if (typeof fields.embargo_until === 'string' && fields.embargo_until.trim() === '')
    delete fields.embargo_until;
}

/**
 * Streams a brain's create form: its file goes straight to the BlobStore (hashed and size-limited
 * on the way); on any invalid field the stored file is deleted again.
 */
export async function readCreateForm(
  ctx: RequestContext<unknown>,
  deps: CommandDeps,
): Promise<{ fields: BrainBody; file: StoredFile }> {
  const parsed = await parseMultipart(ctx.req, {
    blobStore: deps.blobs,
    files: {
      file: uploadFileSpec('file', deps.maxUploadBytes),
      image: uploadFileSpec('image', deps.maxUploadBytes),
    },
  });
  const { file, image } = parsed.files;
  withoutBlankEmbargo(parsed.fields);
  const errors = { ...validateCreateFields(parsed.fields) };
  if (!file && !image) errors.file = [FILE_REQUIRED];
  if (file && image) errors.non_field_errors = [ONE_FILE];
  const stored = file ?? image;
  if (Object.keys(errors).length > 0 || !stored) {
    await cleanupStoredFiles(deps.blobs, parsed.files);
    throw new ValidationError(errors);
  }
  return { fields: parsed.fields as unknown as BrainBody, file: stored };
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

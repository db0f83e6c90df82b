import { Type } from '@sinclair/typebox';
import type { RequestContext } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { compileFormValidator } from '#shared/http/schemaValidator';
import { type StoredFile, cleanupStoredFiles, parseMultipart } from '#shared/multipart/parseMultipart';
import type { BidsSidecar } from '#shared/domain/uploads/sidecar';
import { readSidecar } from './readSidecar';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { uploadFileSpec } from './uploadFileSpec';

export const FILE_REQUIRED = 'No file was submitted: send it as `file` (.nii, .nii.gz, .zarr, .tif, .tiff).';

const uploadFields = {
  name: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'A name for the upload; default: the file name.',
    }),
  ),
  sidecar: Type.Optional(
    Type.String({
      description:
        "A BIDS JSON sidecar: a JSON object (at most 64 KiB), merged into the upload's metadata once processing completes (the values read from the file win a clash; metadata.sidecar_keys lists the sidecar's keys).",
    }),
  ),
};

export const uploadFormSchema = Type.Object({
  file: Type.String({
    format: 'binary',
    description: '.nii, .nii.gz, .zarr (a zip of the store), .tif or .tiff.',
  }),
  ...uploadFields,
});

const validateFields = compileFormValidator(Type.Object(uploadFields));

/**
 * Streams an upload form: `file` goes straight to the BlobStore (extension checked before the
 * first byte, hashed and size-limited on the way); when a field is invalid it is deleted again.
 */
export async function readUploadForm(
  ctx: RequestContext<unknown>,
  deps: CommandDeps,
): Promise<{ name: string | undefined; sidecar: BidsSidecar | null; file: StoredFile }> {
  const parsed = await parseMultipart(ctx.req, {
    blobStore: deps.blobs,
    files: { file: uploadFileSpec('file', deps.maxUploadBytes) },
    // A sidecar of up to 64 KiB as JSON may come pretty-printed: it is measured once parsed.
    maxFieldBytes: 1024 * 1024,
  });
  const errors = { ...validateFields(parsed.fields) };
  const { file } = parsed.files;
  if (!file) errors.file = [FILE_REQUIRED];
  const sidecar = readSidecar(parsed.fields.sidecar, errors);
  if (Object.keys(errors).length > 0 || !file) {
    await cleanupStoredFiles(deps.blobs, parsed.files);
    throw new ValidationError(errors);
  }
  return {
    name: parsed.fields.name,
    sidecar,
    file,
  };
}

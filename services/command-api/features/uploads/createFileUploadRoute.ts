import type { RouteSpec } from '#shared/http/routeSpec';
import { UnsupportedMediaTypeError } from '#shared/errors/httpErrors';
import { publicDownloadUrl } from '#shared/http/download/publicDownloadUrl';
import { fileUploadDownloadUrl, fileUploadJson, fileUploadSchema } from '#shared/views/fileUploadViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { withStoredFile } from '#services/command-api/withStoredFile';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { readUploadForm, uploadFormSchema } from './readUploadForm';
import { recordUpload } from './recordUpload';

export const createFileUploadRoute = (deps: CommandDeps): RouteSpec => ({
  method: 'post',
  path: '/api/file-uploads/',
  operationId: 'createFileUpload',
  summary: 'Upload a data file (.nii, .nii.gz, .zarr, .tif, .tiff)',
  description:
    'multipart/form-data with `file`, an optional `name` (default: the file name) and an optional `sidecar` (a BIDS JSON sidecar as JSON text: an object of at most 64 KiB, else 400 on sidecar; merged into metadata when processing completes, the values read from the file winning a clash, with metadata.sidecar_keys listing its keys). The file is streamed into storage, hashed on the way; it is recorded (status uploaded, then processed) only once its bytes are durable. Another extension is 400 on `file` before any byte is stored; more than MAX_UPLOAD_BYTES (default 5 GiB) is 413 while streaming; a refused or aborted upload leaves no bytes. Counts against the upload rate limit (120 per hour per user by default), shared with brain creation.',
  tags: ['file uploads'],
  auth: 'required',
  rateLimit: 'upload',
  multipart: uploadFormSchema,
  multipartOnly: true,
  responses: {
    201: { description: 'The upload, status uploaded, metadata {}', schema: fileUploadSchema },
    400: { description: 'No file, an unsupported extension, an invalid name or sidecar' },
    413: { description: 'The file is larger than MAX_UPLOAD_BYTES' },
    415: { description: 'Not multipart/form-data' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    if (!ctx.req.is('multipart/form-data'))
      throw new UnsupportedMediaTypeError(ctx.req.get('Content-Type') ?? '');
    const actor = { userId: principal.userId, isStaff: principal.isStaff };
    const { name, sidecar, file } = await readUploadForm(ctx, deps);
    const now = deps.clock().toISOString();
    const recorded = await withStoredFile(deps, file.key, () =>
      recordUpload(
        deps,
        file,
        { name: name ?? file.filename, associatedBrainId: null, sidecar },
        actor,
        commandContext(ctx),
        now,
      ),
    );
    const { data } = recorded;
    const s3Url = await publicDownloadUrl(deps.blobs, fileUploadDownloadUrl(ctx.baseUrl, data.uploadId), {
      key: data.blobKey,
      filename: data.filename,
    });
    const row = {
      id: data.uploadId,
      name: data.name,
      filename: data.filename,
      date_uploaded: data.receivedAt,
      uploader_id: principal.userId,
      uploader_username: principal.username,
      uploader_email: principal.email,
      status: 'uploaded' as const,
      processing_started: null,
      processing_completed: null,
      size_bytes: data.sizeBytes,
      associated_brain_id: null,
      brain_name: null,
      brain_readable_id: null,
      mime_type: data.mimeType,
      metadata: {},
      preview_blob_key: null,
    };
    return { status: 201, body: fileUploadJson(row, ctx.baseUrl, s3Url), position: recorded.position };
  },
});

import type { RouteSpec } from '#shared/http/routeSpec';
import { TUS_PATH } from './tusEndpoint';

/**
 * The tus endpoint in the OpenAPI document. It is served raw (tusEndpoint, mounted before the
 * routes: tus needs the request stream and its own headers), so these handlers never run.
 */
const documentationOnly = (): Promise<never> =>
  Promise.reject(new Error('tus requests are served by the tus endpoint'));

const PROTOCOL =
  'tus 1.0 (https://tus.io/protocols/resumable-upload): every request but OPTIONS carries `Tus-Resumable: 1.0.0` (else 412) and `Authorization` as everywhere. Extensions: creation, creation-with-upload, termination, expiration, checksum (`Upload-Checksum: sha256|sha1|md5 <base64>`; a mismatch is 460 and nothing of the body is kept). `OPTIONS /api/file-uploads/tus/` answers `Tus-Version`, `Tus-Extension`, `Tus-Max-Size` (MAX_UPLOAD_BYTES) and `Tus-Checksum-Algorithm`. Errors are JSON: `{"detail": "..."}`, or `{"field": ["..."]}` for a 400 on a metadata key.';

export const tusRouteDocs = (): RouteSpec[] => [
  {
    method: 'post',
    path: `${TUS_PATH}/`,
    operationId: 'createTusUpload',
    summary: 'Start a resumable upload (tus creation)',
    description: `${PROTOCOL}\n\nHeaders: \`Upload-Length\` (required; deferred length is refused with 400; more than MAX_UPLOAD_BYTES is 413 before any byte) and \`Upload-Metadata\` with \`filename\` (required: its extension picks the format as for multipart, else 400 on \`filename\`), optional \`name\` (1–255 characters, default the file name) and \`filetype\` (the content type recorded). 201 with \`Location: <base>/api/file-uploads/tus/{id}\` (absolute, with the host and port the client used, X-Forwarded-Host/-Port behind a trusted proxy) and \`Upload-Expires\` (TUS_EXPIRY_SECONDS after creation). With \`Content-Type: application/offset+octet-stream\` the body is the first bytes (creation-with-upload; \`Upload-Offset\` in the answer). Counts once against the upload rate limit (shared with multipart uploads and brain creation); 400 and 413 are refunded; the PATCH and HEAD requests of an upload never count.`,
    tags: ['file uploads'],
    auth: 'required',
    rateLimit: 'upload',
    responses: {
      201: { description: 'Created: Location, Upload-Expires (and Upload-Offset when bytes came with it)' },
      400: {
        description: 'No or unsupported filename, an invalid name, a deferred length, a bad checksum header',
      },
      412: { description: 'Tus-Resumable missing' },
      413: { description: 'Upload-Length over MAX_UPLOAD_BYTES' },
    },
    handler: documentationOnly,
  },
  {
    method: 'patch',
    path: `${TUS_PATH}/{id}`,
    operationId: 'appendTusUpload',
    summary: 'Append bytes to a resumable upload (tus PATCH); HEAD gives its offset',
    description: `${PROTOCOL}\n\n\`{id}\` is the file upload's id (a UUID). \`Content-Type: application/offset+octet-stream\`, \`Upload-Offset\` equal to the upload's (else 409, nothing written), optionally \`Upload-Checksum\`. 204 with the new \`Upload-Offset\` and \`Upload-Expires\`. The PATCH that brings the last byte is answered only once the whole file is hashed (SHA-256) and recorded: \`GET /api/file-uploads/{id}/\` then shows it with status \`uploaded\` (then the usual processing), and its id may be given as \`upload\` to \`POST /api/brains/\`; before that the upload is absent from every list and 404. \`HEAD\` answers 200 with \`Upload-Offset\`, \`Upload-Length\`, \`Upload-Metadata\` and \`Cache-Control: no-store\`: where to resume. Only the creator may HEAD, PATCH or DELETE an upload (anyone else: 404). An upload past \`Upload-Expires\`: 410; its bytes are then removed, and it stays 410 to its creator for one more expiry period before it is forgotten (404). 423 when another request (on any instance) has been writing the same upload for longer than TUS_LOCK_WAIT_MS.`,
    tags: ['file uploads'],
    auth: 'required',
    responses: {
      204: { description: 'Appended: Upload-Offset (and the upload recorded when it was the last byte)' },
      404: { description: 'No such upload of the caller' },
      409: { description: 'Upload-Offset is not the upload’s offset' },
      410: { description: 'Expired' },
      413: { description: 'More bytes than Upload-Length' },
      423: { description: 'Another request is writing this upload' },
      460: { description: 'Checksum mismatch (nothing of the body kept)' },
    },
    handler: documentationOnly,
  },
  {
    method: 'delete',
    path: `${TUS_PATH}/{id}`,
    operationId: 'terminateTusUpload',
    summary: 'Abandon a resumable upload (tus termination)',
    description: `${PROTOCOL}\n\n204: the bytes received so far and the upload's state are removed. A finished upload is a file upload: 400 here (delete it with \`DELETE /api/file-uploads/{id}/\`).`,
    tags: ['file uploads'],
    auth: 'required',
    responses: {
      204: { description: 'Terminated' },
      404: { description: 'No such upload of the caller' },
    },
    handler: documentationOnly,
  },
];

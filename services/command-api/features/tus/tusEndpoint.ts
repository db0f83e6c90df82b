import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type Readable, finished } from 'node:stream';
import type { Request, RequestHandler, Response } from 'express';
import { Server, type Upload } from '@tus/server';
import type { Principal } from '#shared/auth/principal';
import { fileNameProblem } from '#shared/domain/uploads/fileRules';
import { asError } from '#shared/errors/asError';
import { AuthenticationError, BadRequestError } from '#shared/errors/httpErrors';
import { formatPosition } from '#shared/eventStore/eventStore';
import { uploadStreamName } from '#shared/domain/uploads/events';
import type { RawHandlerContext, RawRequestHandler } from '#shared/http/createApiApp';
import { allowSlowBody } from '#shared/http/connectionTimeouts';
import { authorizationHeaderOf } from '#shared/http/credentialHeader';
import { requestStateOf } from '#shared/http/requestState';
import { unstorableTextErrors } from '#shared/http/storableText';
import type { TusStorage } from '#shared/tus/openTusStorage';
import { TusHttpError } from '#shared/tus/tusHttpError';
import { TusRequestBody, withTusRequestBody } from '#shared/tus/tusRequestBody';
import { hashStoredBlob } from '#shared/tus/hashStoredBlob';
import { TUS_CHECKSUM_ALGORITHMS, parseUploadChecksum, withTusChecksum } from '#shared/tus/tusChecksum';
import { isTusUploadId, tusBlobKey, tusOwnedKeys } from '#shared/tus/tusKeys';
import {
  claimTusCompletion,
  deleteTusUpload,
  releaseTusCompletion,
  insertTusUpload,
  tusUploadOwner,
} from '#shared/tus/tusUploadsTable';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { type RecordedUpload, recordUpload } from '#services/command-api/features/uploads/recordUpload';

/** The tus 1.0 endpoint (decisions.md "Resumable uploads (tus 1.0)"): creation here, each upload below. */
export const TUS_PATH = '/api/file-uploads/tus';

export const FILENAME_REQUIRED =
  'Upload-Metadata must carry filename (its extension picks the format: .nii, .nii.gz, .zarr, .tif, .tiff).';
const NAME_INVALID = 'Ensure this field has 1 to 255 characters.';

/** What the hooks of the request being handled need, carried through tus by AsyncLocalStorage. */
interface TusRequestScope {
  readonly req: Request;
  readonly principal: Principal;
  readonly context: RawHandlerContext;
  /** Set by the finishing request once the upload is recorded. */
  position?: string;
}

const tusError = (status: number, body: Record<string, unknown>) => new TusHttpError(status, body);
const uploadNotFound = () => tusError(404, { detail: 'Not found.' });
const uploadExpired = () =>
  tusError(410, {
    detail: 'The upload expired before it was finished and its bytes are removed: start a new one.',
  });

/** Request headers Express parsed, as a Fetch API Headers. */
function webHeaders(req: Request): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/** JSON bodies stay; tus's own text bodies become {"detail": "..."}. */
function jsonErrorBody(text: string, status: number): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return text;
  } catch {
    // tus's text
  }
  const detail = text.trim() || `Request failed (${status}).`;
  return JSON.stringify({ detail });
}

/** The CORS headers are the app's (applyCors, listing the tus ones): tus's are left out. */
const SKIPPED_HEADERS = new Set([
  'access-control-allow-origin',
  'access-control-expose-headers',
  'access-control-allow-credentials',
  'content-type',
  'content-length',
]);

async function sendWebResponse(res: Response, response: globalThis.Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (!SKIPPED_HEADERS.has(name)) res.setHeader(name, value);
  });
  const text = response.body ? await response.text() : '';
  if (response.status >= 400) {
    const body = jsonErrorBody(text, response.status);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
    return;
  }
  if (text) res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text || undefined);
}

/**
 * The request's body as a web stream for tus, as Readable.toWeb makes it but without copying each
 * chunk into a new Uint8Array first (Node 20 does, to detach pooled buffers; a socket's chunks are
 * not pooled): that copy and its garbage were a tenth of the server's CPU in a large upload. Same
 * back-pressure (pause at the queue's byte limit, resume on pull), end, errors (a connection that
 * closes early is an AbortError, as tus expects) and cancellation.
 */
function webBodyOf(req: Readable): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const cleanup = finished(req, (error) => {
    cleanup();
    req.on('error', () => undefined);
    if (!error) return controller.close();
    controller.error(
      error.code === 'ERR_STREAM_PREMATURE_CLOSE'
        ? Object.assign(new Error('The operation was aborted', { cause: error }), { name: 'AbortError' })
        : error,
    );
  });
  req.on('data', (chunk: Buffer) => {
    controller.enqueue(chunk);
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  });
  return new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => void req.resume(),
      cancel: (reason: unknown) => void req.destroy(reason instanceof Error ? reason : undefined),
    },
    { highWaterMark: req.readableHighWaterMark, size: (chunk) => chunk.byteLength },
  );
}

function runMiddleware(middleware: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void middleware(req, res, (error?: unknown) => (error ? reject(asError(error)) : resolve()));
  });
}

/** The first bytes of a stored upload (what a multipart upload keeps for sniffing). */
async function headOf(storage: TusStorage, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.blobs.get(key, { start: 0, end: 64 * 1024 - 1 }))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The base name of a client's file name (as multipart's is), '' when it has none. */
function baseName(filename: string): string {
  return path.posix.basename(filename.replaceAll('\\', '/'));
}

/** The client's content type for the file when it sent a plausible one (`filetype`, tus-js-client's key). */
function mimeTypeOf(metadata: Upload['metadata']): string {
  const claimed = metadata?.filetype;
  return claimed && /^[\w.+-]+\/[\w.+-]+$/.test(claimed) && claimed.length <= 255
    ? claimed
    : 'application/octet-stream';
}

/**
 * The tus server (@tus/server) over the storage of shared/tus, behind this service's
 * authentication, rate limits and error shapes, recording each finished upload as a file upload.
 */
export function tusEndpoint(deps: CommandDeps, storage: TusStorage): RawRequestHandler {
  const scopes = new AsyncLocalStorage<TusRequestScope>();
  const scope = (): TusRequestScope => {
    const current = scopes.getStore();
    if (!current) throw new Error('tus hook outside a request');
    return current;
  };

  /** Whether the upload's stream has its UploadReceived: undefined when the store cannot tell now. */
  const recordedAlready = (id: string): Promise<boolean | undefined> =>
    deps.store
      .readStream(uploadStreamName(id), { maxCount: 1 })
      .then((events) => events.some((event) => event.type === 'UploadReceived'))
      .catch(() => undefined);

  const record = async (upload: Upload, current: TusRequestScope): Promise<RecordedUpload> => {
    const { principal, req } = current;
    const key = tusBlobKey(upload.id);
    await storage.makeDurable(upload.id);
    // Hashed on the way in when every byte came through this process, else read again.
    const followed = await storage.hashes.take(upload.id, upload.size ?? -1);
    const hashed = followed
      ? {
          sha256: followed,
          size: (await storage.blobs.stat(key))?.size ?? -1,
          head: await headOf(storage, key),
        }
      : await hashStoredBlob(storage.blobs, key);
    if (hashed.size !== upload.size) throw new Error(`stored ${hashed.size} bytes of ${upload.size}`);
    const filename = baseName(upload.metadata?.filename ?? '');
    const requestId = requestStateOf(req)?.requestId ?? randomUUID();
    const correlation = req.get('X-Correlation-Id');
    return recordUpload(
      deps,
      {
        field: 'file',
        key,
        filename,
        mimeType: mimeTypeOf(upload.metadata),
        size: hashed.size,
        sha256: hashed.sha256,
        head: hashed.head,
      },
      { uploadId: upload.id, name: upload.metadata?.name ?? filename, associatedBrainId: null },
      { userId: principal.userId, isStaff: principal.isStaff },
      {
        actor: String(principal.userId),
        requestId,
        correlationId: correlation && /^[\w.:-]{1,100}$/.test(correlation) ? correlation : requestId,
        causationId: null,
      },
      deps.clock().toISOString(),
    );
  };

  const complete = async (upload: Upload): Promise<Record<string, string>> => {
    const current = scope();
    const { context } = current;
    if (!(await claimTusCompletion(storage.pool, upload.id))) {
      // A repeated final PATCH (a client that lost the 204) finds it recorded; otherwise another
      // request is recording it right now, or one failed without knowing whether it had.
      if ((await recordedAlready(upload.id)) === true) return {};
      throw tusError(423, { detail: 'The upload is being recorded: ask again (HEAD) in a moment.' });
    }
    let recorded: RecordedUpload;
    try {
      recorded = await record(upload, current);
    } catch (error) {
      context.logger.error('tus upload could not be recorded', {
        upload_id: upload.id,
        error: String(error),
      });
      const received = await recordedAlready(upload.id);
      // The append committed although its answer was lost: the upload is recorded, its bytes stay.
      if (received === true) return {};
      if (received === undefined) {
        // Cannot tell: keep the bytes and let a repeated final PATCH try again.
        await releaseTusCompletion(storage.pool, upload.id).catch(() => undefined);
        throw tusError(503, { detail: 'The upload could not be recorded yet: send the last request again.' });
      }
      // Not recorded: no bytes outlive a completion that could not be recorded.
      for (const each of tusOwnedKeys(upload.id)) await storage.blobs.delete(each).catch(() => undefined);
      await deleteTusUpload(storage.pool, upload.id).catch(() => undefined);
      throw tusError(500, { detail: 'The upload could not be recorded: send it again.' });
    }
    if (!recorded.position) return {};
    // Read-your-writes, as every write: the 204 goes out once the read side has the upload (outside
    // the recording's failure path: a slow read side never costs a recorded upload its bytes).
    if (context.consistency)
      await context.consistency.waitFor(recorded.position, context.consistencyTimeoutMs);
    current.position = formatPosition(recorded.position);
    return { 'X-Event-Position': current.position };
  };

  const server = new Server({
    path: TUS_PATH,
    datastore: storage.dataStore,
    locker: storage.locker,
    maxSize: deps.maxUploadBytes,
    disableTerminationForFinishedUploads: true,
    namingFunction: () => randomUUID(),
    getFileIdFromRequest: (_req, lastPath) => {
      const id = lastPath?.toLowerCase();
      return id && isTusUploadId(id) ? id : undefined;
    },
    generateUrl: (_req, { id }) => {
      const { req, context } = scope();
      return `${context.linkBase(req)}${TUS_PATH}/${id}`;
    },
    // Only its creator may see an upload: anyone else is told it does not exist. An upload the
    // cleanup removed as expired is Gone to its creator until its tombstone is purged.
    onIncomingRequest: async (req, id) => {
      if (req.method === 'POST') return;
      const owner = await tusUploadOwner(storage.pool, id);
      if (owner === undefined || owner.ownerId !== scope().principal.userId) throw uploadNotFound();
      if (owner.expired) throw uploadExpired();
    },
    onUploadCreate: async (_req, upload) => {
      const metadata = upload.metadata ?? {};
      const filename = metadata.filename ? baseName(metadata.filename) : '';
      if (!filename) throw tusError(400, { filename: [FILENAME_REQUIRED] });
      const problem = fileNameProblem('file', filename) ?? unstorableTextErrors({ filename })?.filename?.[0];
      if (problem) throw tusError(400, { filename: [problem] });
      if (metadata.name !== undefined) {
        const name = metadata.name ?? '';
        if (name.length < 1 || name.length > 255) throw tusError(400, { name: [NAME_INVALID] });
        const unstorable = unstorableTextErrors({ name });
        if (unstorable) throw tusError(400, unstorable);
      }
      const createdAt = new Date(upload.creation_date ?? Date.now());
      await insertTusUpload(storage.pool, {
        id: upload.id,
        ownerId: scope().principal.userId,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + storage.config.expiryMs),
      });
      return { metadata };
    },
    onUploadFinish: async (_req, upload) => ({ headers: await complete(upload) }),
    onResponseError: (_req, error) => {
      if (!('status_code' in error)) {
        scopes
          .getStore()
          ?.context.logger.error('tus request failed', { error: String(error), stack: error.stack });
        return { status_code: 500, body: JSON.stringify({ detail: 'A server error occurred.' }) };
      }
      return undefined;
    },
  });

  const handle = async (req: Request, res: Response, context: RawHandlerContext): Promise<void> => {
    const state = requestStateOf(req);
    const base = req.path === TUS_PATH || req.path === `${TUS_PATH}/`;
    if (state) state.route = base ? `${TUS_PATH}/` : `${TUS_PATH}/{id}`;
    const header = authorizationHeaderOf(req);
    let principal: Principal | undefined;
    let authError: Error | undefined;
    try {
      principal = await context.authenticator.authenticate(header);
    } catch (error) {
      authError = asError(error);
    }
    if (state) state.principal = principal;
    // A created upload counts against the upload budget; its PATCH and HEAD requests never do.
    if (req.method === 'POST' && context.rateLimiter) {
      await runMiddleware(context.rateLimiter.middleware('default'), req, res);
      await runMiddleware(context.rateLimiter.middleware('upload'), req, res);
    }
    if (authError) throw authError;
    if (!principal) throw new AuthenticationError();
    if (req.method === 'POST' && req.get('Upload-Length') === undefined && req.get('Upload-Defer-Length'))
      throw new BadRequestError('Send Upload-Length: this server does not take uploads of deferred length.');
    const checksum = parseUploadChecksum(req.get('Upload-Checksum'));
    if (typeof checksum === 'string') throw new BadRequestError(checksum);
    const hasBody = req.method === 'POST' || req.method === 'PATCH';
    if (hasBody) allowSlowBody(req);
    // On the local disk the store reads the body from the Node request itself (TusRequestBody).
    const direct = hasBody && !storage.onS3 ? new TusRequestBody(req) : undefined;
    const request = new Request(`http://localhost${req.originalUrl}`, {
      method: req.method,
      headers: webHeaders(req),
      ...(hasBody ? { body: direct?.standIn ?? webBodyOf(req), duplex: 'half' } : {}),
    });
    // @tus/server listens to the Node request to end the write gracefully when the client goes away.
    Object.assign(request, { runtime: { node: { req, res } } });
    const response = await scopes.run({ req, principal, context }, () =>
      withTusChecksum(checksum, () => withTusRequestBody(direct, () => server.handleWeb(request))),
    );
    await sendWebResponse(res, response);
  };

  return {
    pathPrefix: `${TUS_PATH}/`,
    optionsHeaders: {
      'Tus-Resumable': '1.0.0',
      'Tus-Version': '1.0.0',
      'Tus-Extension': storage.dataStore.extensions.join(','),
      'Tus-Max-Size': String(deps.maxUploadBytes),
      'Tus-Checksum-Algorithm': TUS_CHECKSUM_ALGORITHMS.join(','),
    },
    handle(req, res, next, context) {
      handle(req, res, context).catch(next);
    },
  };
}

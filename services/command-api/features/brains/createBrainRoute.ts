import type { RouteSpec, RequestContext } from '#shared/http/routeSpec';
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '#shared/commandHandling/commandContext';
import { handleCommand, toNewEvents } from '#shared/commandHandling/handleCommand';
import { ConflictError } from '#shared/domain/domainErrors';
import { decideUpload } from '#shared/domain/uploads/decide';
import { uploadDecider, uploadStreamName } from '#shared/domain/uploads/events';
import { type GlobalPosition, WrongExpectedRevisionError } from '#shared/eventStore/eventStore';
import { decideBrain } from '#shared/domain/brains/decide';
import {
  type BrainCreated,
  type BrainState,
  brainDecider,
  brainStreamName,
} from '#shared/domain/brains/events';
import type { Actor } from '#shared/domain/actor';
import type { StoredFile } from '#shared/multipart/parseMultipart';
import type { BidsSidecar } from '#shared/domain/uploads/sidecar';
import { brainShapeBSchema } from '#shared/views/brainViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { withStoredFile } from '#services/command-api/withStoredFile';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { deleteUploads } from '#services/command-api/features/uploads/deleteUploads';
import { uploadReceivedData } from '#services/command-api/features/uploads/recordUpload';
import type { BrainBody } from './brainFields';
import { recordBrainUpload } from './brainUploads';
import { type CreateBrainFor, brainCreation, createdBrainBody } from './brainCreation';
import { createBrainFromUpload } from './brainFromUpload';
import { brainFormSchema, brainJsonCreateSchema, readCreateBody, readCreateForm } from './readBrainForm';

export const createBrainRoute = (deps: CommandDeps): RouteSpec<typeof brainJsonCreateSchema | undefined> => ({
  method: 'post',
  path: '/api/brains/',
  operationId: 'createBrain',
  summary: 'Create a brain with its file, or from one of your file uploads',
  description:
    "multipart/form-data with the file as `file` (.nii, .nii.gz, .zarr, .tif, .tiff) or `image` (TIFF only), or with `upload` instead: the id of one of the caller's own file uploads (POST /api/file-uploads/ or tus) that is not yet a brain's file and has not failed (uploaded, processing or completed; unknown, someone else's (staff included), taken or failed: 400 on upload). JSON and application/x-www-form-urlencoded take `upload` only (a file there: 400). A file and `upload` together: 400. name is required; an atlas or a category is required. With an atlas, species and category are derived from it, and a category that contradicts it is 400. Only staff may set verified (403). visibility is public unless given (private, or embargoed with a future embargo_until, else 400 on embargo_until). `sidecar`: an optional BIDS JSON sidecar (an object in JSON, JSON text in a form; at most 64 KiB as JSON, else 400 on sidecar), merged into the file upload's metadata once processing completes (at once for an upload already completed); the values read from the file win a clash and metadata.sidecar_keys lists the sidecar's keys. A sent file is recorded as a file upload of the brain (status uploaded); files larger than MAX_UPLOAD_BYTES are refused while streaming (413). With `upload`, the brain shows that upload's file, status and metadata, the upload is associated with the brain (exactly one brain, also under concurrent requests), and deleting the brain deletes it. Every create counts against the upload rate limit. Answers shape B.",
  tags: ['brains'],
  auth: 'required',
  rateLimit: 'upload',
  body: brainJsonCreateSchema,
  multipart: brainFormSchema,
  responses: {
    201: { description: 'The new brain, in shape B', schema: brainShapeBSchema },
    400: {
      description:
        'Invalid fields or sidecar, no file nor upload, both, an unsupported file, an upload that is not yours, taken or failed, no atlas or category, or a contradiction',
    },
    403: { description: 'verified set by someone who is not staff' },
    409: { description: 'Lost to concurrent requests too many times; try again' },
    413: { description: 'The file is larger than the configured limit' },
    415: { description: 'Neither multipart/form-data, JSON nor url-encoded' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    const actor = { userId: principal.userId, isStaff: principal.isStaff };
    const form = ctx.req.is('multipart/form-data')
      ? await readCreateForm(ctx, deps)
      : readCreateBody(ctx.body ?? {});
    if (form.file) return createWithFile(deps, ctx, form.fields, form.file, form.sidecar, actor);
    const now = deps.clock().toISOString();
    const command = await brainCreation(deps, form.fields, actor, now);
    const cmd = commandContext(ctx);
    const result = await createBrainFromUpload(deps, form.upload, form.sidecar, command, actor, cmd, now);
    const body = createdBrainBody(result.created, result.upload.filename, ctx.baseUrl);
    return { status: 201, body, position: result.position };
  },
});

async function createWithFile(
  deps: CommandDeps,
  ctx: RequestContext<unknown>,
  fields: BrainBody,
  file: StoredFile,
  sidecar: BidsSidecar | null,
  actor: Actor,
) {
  const cmd = commandContext(ctx);
  const now = deps.clock().toISOString();
  // The file is deleted if the create fails, or rolls back later under a unit of work.
  return withStoredFile(deps, file.key, async () => {
    const command = await brainCreation(deps, fields, actor, now);
    if (deps.store.appendToStreams) {
      const created = await createAtomically(deps, file, sidecar, command, actor, cmd, now);
      const body = createdBrainBody(created.event, file.filename, ctx.baseUrl);
      return { status: 201, body, position: created.position };
    }
    const brainId = await deps.ids.next('brain', cmd);
    const uploadId = await recordBrainUpload(deps, file, brainId, sidecar, actor, cmd, now);
    const result = await handleCommand(
      deps.store,
      brainStreamName(brainId),
      brainDecider,
      (state: BrainState) => decideBrain(command(brainId, uploadId), state),
      cmd,
      { newStream: true }, // the id was just allocated
    ).catch(async (error: unknown) => {
      // Without a unit of work the upload record is already committed: it goes with the brain.
      if (!deps.store.unitOfWork?.isActive())
        await deleteUploads(deps, [uploadId], 'command_failed', actor, cmd).catch(() => undefined);
      throw error;
    });
    const body = createdBrainBody(result.events[0] as BrainCreated, file.filename, ctx.baseUrl);
    return { status: 201, body, position: result.position };
  });
}

/**
 * Where the store appends to several streams at once (PostgreSQL): the brain's id, its file's upload
 * and the brain are one append (IdAllocated, UploadReceived, BrainCreated), one statement and one
 * commit; all of them or none, so a failure leaves nothing to undo but the stored file. Both new
 * streams are decided on their initial state (a fresh UUID's stream and a just-allocated id's
 * cannot exist; should one, the append is refused and nothing is written: 409).
 */
async function createAtomically(
  deps: CommandDeps,
  file: StoredFile,
  sidecar: BidsSidecar | null,
  command: CreateBrainFor,
  actor: Actor,
  cmd: CommandContext,
  now: string,
): Promise<{ event: BrainCreated; position: GlobalPosition }> {
  const uploadId = randomUUID();
  let event: BrainCreated | undefined;
  const { results } = await deps.ids
    .nextWith('brain', cmd, (brainId) => {
      const received = uploadReceivedData(
        file,
        { name: file.filename, associatedBrainId: brainId, sidecar, uploadId },
        actor,
        now,
      );
      const uploadEvents = decideUpload(
        { type: 'ReceiveUpload', data: received },
        uploadDecider.initialState(),
      );
      const brainEvents = decideBrain(command(brainId, uploadId), brainDecider.initialState());
      event = brainEvents[0] as BrainCreated;
      return [
        {
          streamName: uploadStreamName(uploadId),
          events: toNewEvents(uploadEvents, cmd),
          expectedRevision: 'no_stream',
        },
        {
          streamName: brainStreamName(brainId),
          events: toNewEvents(brainEvents, cmd),
          expectedRevision: 'no_stream',
        },
      ];
    })
    .catch((error: unknown) => {
      if (error instanceof WrongExpectedRevisionError)
        throw new ConflictError('The request conflicted with concurrent ones; try again.');
      throw error;
    });
  return { event: event!, position: results[results.length - 1]!.position };
}

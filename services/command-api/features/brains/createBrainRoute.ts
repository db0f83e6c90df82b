import { randomUUID } from 'node:crypto';
import type { RouteSpec } from '#shared/http/routeSpec';
import { UnsupportedMediaTypeError } from '#shared/errors/httpErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { type CreateBrain, decideBrain } from '#shared/domain/brains/decide';
import {
  type BrainCreated,
  type BrainState,
  brainDecider,
  brainStreamName,
  createdVisibility,
} from '#shared/domain/brains/events';
import { readableIdFor } from '#shared/domain/naming/naming';
import { brainShapeB, brainShapeBSchema } from '#shared/views/brainViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { withStoredFile } from '#services/command-api/withStoredFile';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { colourOf, embargoUntilOf } from './brainFields';
import { deleteUploads } from '#services/command-api/features/uploads/deleteUploads';
import { recordBrainUpload } from './brainUploads';
import { resolveAtlas, resolveCategory } from './resolvePlacement';
import { brainFormSchema, readCreateForm } from './readBrainForm';

export const createBrainRoute = (deps: CommandDeps): RouteSpec => ({
  method: 'post',
  path: '/api/brains/',
  operationId: 'createBrain',
  summary: 'Create a brain with its file',
  description:
    'multipart/form-data. name is required; the file as `file` (.nii, .nii.gz, .zarr, .tif, .tiff) or `image` (TIFF only); an atlas or a category is required. With an atlas, species and category are derived from it, and a category that contradicts it is 400. Only staff may set verified (403). visibility is public unless given (private, or embargoed with a future embargo_until, else 400 on embargo_until). The file is recorded as a file upload of the brain (status uploaded). Files larger than MAX_UPLOAD_BYTES are refused while streaming (413). Answers shape B.',
  tags: ['brains'],
  auth: 'required',
  rateLimit: 'upload',
  multipart: brainFormSchema,
  multipartOnly: true,
  responses: {
    201: { description: 'The new brain, in shape B', schema: brainShapeBSchema },
    400: {
      description: 'Invalid fields, no or an unsupported file, no atlas or category, or a contradiction',
    },
    403: { description: 'verified set by someone who is not staff' },
    413: { description: 'The file is larger than the configured limit' },
    415: { description: 'Not multipart/form-data' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    if (!ctx.req.is('multipart/form-data'))
      throw new UnsupportedMediaTypeError(ctx.req.get('Content-Type') ?? '');
    const actor = { userId: principal.userId, isStaff: principal.isStaff };
    const { fields, file } = await readCreateForm(ctx, deps);
    const cmd = commandContext(ctx);
    const now = deps.clock().toISOString();
    // The file is deleted if the create fails, or rolls back later under a unit of work.
    return withStoredFile(deps, file.key, async () => {
      const embargoUntil = embargoUntilOf(fields.embargo_until);
      const [atlas, category] = await Promise.all([
        resolveAtlas(deps.store, fields.atlas ?? undefined),
        resolveCategory(deps.store, fields.category),
      ]);
      const command = (brainId: number, fileUploadId: string | null): CreateBrain => ({
        type: 'CreateBrain',
        data: {
          brainId,
          readableId: readableIdFor(fields.name ?? '', brainId),
          uuid: randomUUID(),
          name: fields.name ?? '',
          description: fields.description ?? '',
          atlas,
          category,
          isReference: fields.is_reference ?? false,
          extraLink: fields.extra_link ?? '',
          website: fields.website ?? '',
          color: colourOf(fields.color) ?? '',
          verified: fields.verified ?? false,
          visibility: fields.visibility,
          embargoUntil,
          fileUploadId,
          actor,
          now,
        },
      });
      // Refusals (403, unknown or contradicting references) come before an id or a record is taken.
      decideBrain(command(1, null), brainDecider.initialState());
      const brainId = await deps.ids.next('brain', cmd);
      const uploadId = await recordBrainUpload(deps, file, brainId, actor, cmd, now);
      const stream = brainStreamName(brainId);
      const result = await handleCommand(
        deps.store,
        stream,
        brainDecider,
        (state: BrainState) => decideBrain(command(brainId, uploadId), state),
        cmd,
      ).catch(async (error: unknown) => {
        // Without a unit of work the upload record is already committed: it goes with the brain.
        if (!deps.store.unitOfWork?.isActive())
          await deleteUploads(deps, [uploadId], 'command_failed', actor, cmd).catch(() => undefined);
        throw error;
      });
      const d = (result.events[0] as BrainCreated).data;
      const body = brainShapeB(
        {
          id: d.brainId,
          readable_id: d.readableId,
          uuid: d.uuid,
          name: d.name,
          date_uploaded: d.createdAt,
          website: d.website,
          verified: d.verified,
          category_id: d.categoryId,
          uploader_id: d.uploaderId,
          atlas_id: d.atlasId,
          is_reference: d.isReference,
          extra_link: d.extraLink,
          visibility: createdVisibility(d).visibility,
          embargo_until: createdVisibility(d).embargoUntil,
          file_name: file.filename,
        },
        ctx.baseUrl,
      );
      return { status: 201, body, position: result.position };
    });
  },
});

import { type Static, Type } from '@sinclair/typebox';
import { randomUUID } from 'node:crypto';
import type { RouteSpec, RequestContext } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { afterCommit, afterRollback } from '#shared/eventStore/eventStore';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { decideUser } from '#shared/domain/accounts/decide';
import { userDecider, userStreamName } from '#shared/domain/accounts/events';
import { compileFormValidator } from '#shared/http/schemaValidator';
import { cleanupStoredFiles, parseMultipart } from '#shared/multipart/parseMultipart';
import { checkImage } from '#shared/media/checkImage';
import type { ImageFormat } from '#shared/media/sniffImage';
import { profileJson } from '#shared/views/userViews';
import { ifMatchRevision, weakEtag } from '#shared/http/etag';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { nameField } from './registerRoute';
import { requirePrincipal } from './requirePrincipal';
import { userRecordFromState } from './userRecord';

const fields = {
  first_name: Type.Optional(nameField),
  last_name: Type.Optional(nameField),
  bio: Type.Optional(Type.String({ maxLength: 5000 })),
  location: Type.Optional(Type.String({ maxLength: 200 })),
};

/** The JSON body; "avatar": null removes the avatar. */
const ProfileChanges = Type.Object({ ...fields, avatar: Type.Optional(Type.Null()) });
type ProfileChanges = Static<typeof ProfileChanges>;

const multipartSchema = Type.Object({
  ...fields,
  avatar: Type.Optional(
    Type.String({ format: 'binary', description: 'PNG, JPEG, GIF, WebP or BMP; checked by content.' }),
  ),
});
const validateFormFields = compileFormValidator(Type.Object(fields));

const AVATAR_FORMATS: ReadonlySet<ImageFormat> = new Set(['png', 'jpeg', 'gif', 'webp', 'bmp']);

/** Streams the avatar into the BlobStore and checks by content that it is an image. */
async function readMultipart(ctx: RequestContext<unknown>, deps: CommandDeps, userId: number) {
  const parsed = await parseMultipart(ctx.req, {
    blobStore: deps.blobs,
    files: {
      avatar: {
        keyFor: ({ filename }) =>
          `avatars/${userId}/${randomUUID()}${/\.(png|jpe?g|gif|webp|bmp)$/i.exec(filename)?.[0]?.toLowerCase() ?? ''}`,
        maxBytes: deps.maxAvatarBytes,
      },
    },
  });
  const avatar = parsed.files.avatar;
  const fieldErrors = validateFormFields(parsed.fields);
  const image = avatar
    ? checkImage(avatar.head, { formats: AVATAR_FORMATS, maxPixels: deps.maxImagePixels })
    : undefined;
  if (fieldErrors || (image && !image.ok)) {
    await cleanupStoredFiles(deps.blobs, parsed.files);
    throw new ValidationError({ ...fieldErrors, ...(image && !image.ok ? { avatar: [image.message] } : {}) });
  }
  return { changes: parsed.fields as ProfileChanges, avatarKey: avatar?.key };
}

export const updateProfileRoute = (deps: CommandDeps): RouteSpec<typeof ProfileChanges | undefined> => ({
  method: 'patch',
  path: '/api/profile/',
  operationId: 'updateProfile',
  summary: 'Update your profile',
  description:
    'JSON, or multipart/form-data with an avatar image. Send "avatar": null (JSON) to remove the avatar. With If-Match (the ETag of GET), a concurrent change in between gives 409.',
  tags: ['profile'],
  auth: 'required',
  body: ProfileChanges,
  multipart: multipartSchema,
  responses: {
    200: { description: 'The updated profile (same shape as GET)' },
    400: { description: 'Invalid fields or not an image' },
    409: { description: 'If-Match is stale: the account changed since it was read' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    const { changes, avatarKey } = ctx.req.is('multipart/form-data')
      ? await readMultipart(ctx, deps, principal.userId)
      : { changes: ctx.body ?? {}, avatarKey: undefined };
    const newAvatar = avatarKey ?? (changes.avatar === null ? null : undefined);
    let previousAvatar: string | null = null;
    try {
      const result = await handleCommand(
        deps.store,
        userStreamName(principal.userId),
        userDecider,
        (state) => {
          previousAvatar = state.status === 'registered' ? state.avatarKey : null;
          return decideUser(
            {
              type: 'UpdateProfile',
              data: {
                firstName: changes.first_name,
                lastName: changes.last_name,
                bio: changes.bio,
                location: changes.location,
                avatarKey: newAvatar,
                now: deps.clock().toISOString(),
              },
            },
            state,
          );
        },
        commandContext(ctx),
        { expectedRevision: ifMatchRevision(ctx.req.get('If-Match')) },
      );
      if (result.state.status !== 'registered') throw new Error('profile of a missing user');
      // Under a unit of work (Idempotency-Key) the change may still roll back: the files follow the outcome.
      const replaced = newAvatar !== undefined && previousAvatar !== newAvatar ? previousAvatar : null;
      if (replaced) await afterCommit(deps.store, () => deps.blobs.delete(replaced).catch(() => undefined));
      if (avatarKey) afterRollback(deps.store, () => deps.blobs.delete(avatarKey).catch(() => undefined));
      return {
        status: 200,
        body: profileJson(userRecordFromState(result.state), ctx.baseUrl),
        headers: { ETag: weakEtag(result.revision) },
        position: result.position,
      };
    } catch (error) {
      if (avatarKey) await deps.blobs.delete(avatarKey).catch(() => undefined);
      throw error;
    }
  },
});

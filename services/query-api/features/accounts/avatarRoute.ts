import { databaseIdOf } from '#shared/http/ids';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { MEDIA_FILE_NAME, imageBlobReply } from '#services/query-api/imageBlobReply';

export const avatarRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/media/avatars/{user_id}/{file_name}/',
  operationId: 'downloadAvatar',
  summary: 'An avatar image',
  tags: ['media'],
  auth: 'public',
  responses: { 200: { description: 'The image bytes' }, 404: { description: 'No such avatar' } },
  async handler(ctx) {
    const { user_id: userId = '', file_name: fileName = '' } = ctx.params;
    const id = databaseIdOf(userId);
    if (id === undefined || !MEDIA_FILE_NAME.test(fileName)) throw new NotFoundError();
    return imageBlobReply(deps.blobs, `avatars/${id}/${fileName}`);
  },
});

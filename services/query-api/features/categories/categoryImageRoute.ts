import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { MEDIA_FILE_NAME, imageBlobReply } from '#services/query-api/imageBlobReply';

export const categoryImageRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/media/categories/{file_name}/',
  operationId: 'downloadCategoryImage',
  summary: 'An uploaded category image',
  tags: ['media'],
  auth: 'public',
  responses: { 200: { description: 'The image bytes' }, 404: { description: 'No such image' } },
  async handler(ctx) {
    const fileName = ctx.params.file_name ?? '';
    if (!MEDIA_FILE_NAME.test(fileName)) throw new NotFoundError();
    return imageBlobReply(deps.blobs, `categories/${fileName}`);
  },
});

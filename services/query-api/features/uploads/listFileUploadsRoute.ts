import { Type } from '@sinclair/typebox';
import { databaseIdOf } from '#shared/http/ids';
import type { RouteSpec } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { listQueryProperties, listReply, listResponseSchema, orderBy } from '#shared/query/listResponse';
import { SqlConditions } from '#shared/query/sqlConditions';
import { UPLOAD_STATUSES, fileUploadSchema } from '#shared/views/fileUploadViews';
import { StringEnum } from '#shared/views/stringEnum';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { asSeenBy, sharedWithSql } from '#shared/query/uploadVisibility';
import { UPLOAD_FROM, findUploads } from './fileUploadSql';
import { uploadJsonFor } from './uploadJsonFor';

const ORDERING = {
  date_uploaded: 'f.date_uploaded',
  name: 'lower(f.name)',
  filename: 'lower(f.filename)',
  status: 'f.status',
  file_size: 'f.size_bytes',
};
export const BRAIN_FILTER_MESSAGE = 'Enter a brain id, or "none" for uploads without a brain.';

/**
 * Whose uploads, and `associated_brain`: a brain id, or "none"; anything else is 400 on the field
 * (decisions.md). The caller's own uploads; with a brain id, also those of that brain when it is
 * shared with them (its collaborators read them: decisions.md "Visibility and collaborators").
 */
function ownerAndBrainFilter(value: unknown, userId: number, filter: SqlConditions): void {
  const user = filter.param(userId);
  const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (text === undefined || text === 'none') {
    filter.where(`f.uploader_id = ${user}`);
    if (text === 'none') filter.where('f.associated_brain_id IS NULL');
    return;
  }
  const id = databaseIdOf(text);
  if (id === undefined) throw ValidationError.field('associated_brain', BRAIN_FILTER_MESSAGE);
  filter.where(`f.associated_brain_id = ${filter.param(id)}`);
  filter.where(`f.uploader_id = ${user} OR ${sharedWithSql(user)}`);
}

const UploadsQuery = Type.Object({
  ...listQueryProperties,
  status: Type.Optional(StringEnum(UPLOAD_STATUSES)),
  associated_brain: Type.Optional(
    Type.String({ description: 'A brain id, or "none" for standalone uploads.' }),
  ),
});

export const listFileUploadsRoute = (deps: QueryDeps): RouteSpec<unknown, typeof UploadsQuery> => ({
  method: 'get',
  path: '/api/file-uploads/',
  operationId: 'listFileUploads',
  summary: 'Your file uploads, newest first',
  description:
    'Only your own (staff too); with `associated_brain` naming a brain shared with you, also its uploads. An array by default (at most 1000, Link and X-Total-Count when more); {count, next, previous, results} when page or page_size is given. Filters combine with AND. `ordering` accepts date_uploaded, name, filename, status, file_size.',
  tags: ['file uploads'],
  auth: 'required',
  query: UploadsQuery,
  responses: {
    200: { description: 'Uploads', schema: listResponseSchema(fileUploadSchema) },
    400: { description: 'An invalid status or associated_brain' },
  },
  async handler(ctx) {
    const filter = new SqlConditions();
    ownerAndBrainFilter(ctx.query.associated_brain, ctx.principal!.userId, filter);
    if (typeof ctx.query.status === 'string') filter.where(`f.status = ${filter.param(ctx.query.status)}`);
    const order = orderBy(ctx.query.ordering, ORDERING, 'f.date_uploaded DESC', 'f.id DESC');
    return listReply(ctx, {
      count: async () =>
        Number(
          (
            await deps.readModels.query<{ n: string }>(
              `SELECT count(*) AS n ${UPLOAD_FROM} ${filter.whereSql}`,
              filter.params(),
            )
          ).rows[0]?.n ?? 0,
        ),
      fetch: async ({ limit, offset }) => {
        const tail = `ORDER BY ${order} LIMIT ${filter.extra(0)} OFFSET ${filter.extra(1)}`;
        const rows = await findUploads(deps.readModels, filter, tail, limit, offset);
        return Promise.all(
          rows.map((row) =>
            uploadJsonFor(deps.blobs, asSeenBy(row, ctx.principal!, deps.uploaderEmails), ctx.baseUrl),
          ),
        );
      },
    });
  },
});

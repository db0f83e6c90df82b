import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { isNumericKey } from '#shared/domain/naming/naming';
import type { CollaboratorRole } from '#shared/domain/brains/visibility';
import { databaseIdOf } from '#shared/http/ids';
import { listQueryProperties, listReply, listResponseSchema } from '#shared/query/listResponse';
import { SqlConditions } from '#shared/query/sqlConditions';
import { whereVisible } from '#shared/query/brainVisibility';
import { collaboratorJson, collaboratorSchema } from '#shared/views/collaboratorViews';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';

interface CollaboratorRow {
  readonly user_id: number;
  readonly username: string;
  readonly role: CollaboratorRole;
  readonly added_at: Date;
}

/** The brain's id when the key names a brain the viewer may see (the rule of brainVisibility). */
async function visibleBrainId(deps: QueryDeps, key: string, ctx: Parameters<typeof viewerFor>[0]) {
  const conditions = new SqlConditions();
  if (isNumericKey(key)) {
    const id = databaseIdOf(key);
    if (id === undefined) return undefined;
    conditions.where(`b.id = ${conditions.param(id)}`);
  } else conditions.where(`b.readable_id = ${conditions.param(key.toLowerCase())}`);
  whereVisible(conditions, viewerFor(ctx), 'b');
  const { rows } = await deps.readModels.query<{ id: number }>(
    `SELECT b.id FROM brains b ${conditions.whereSql}`,
    conditions.params(),
  );
  return rows[0]?.id;
}

export const listCollaboratorsRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/{key}/collaborators/',
  operationId: 'listBrainCollaborators',
  summary: "A brain's collaborators and their roles, oldest first",
  description:
    'Anyone who may see the brain (404 otherwise, as for a brain that does not exist). The key is the id or the readable_id. An array by default; {count, next, previous, results} when page or page_size is given.',
  tags: ['brains'],
  auth: 'public',
  query: Type.Object(listQueryProperties),
  responses: {
    200: { description: 'The collaborators', schema: listResponseSchema(collaboratorSchema) },
    404: { description: 'No brain with this key, or one the caller may not see' },
  },
  async handler(ctx) {
    const brainId = await visibleBrainId(deps, ctx.params.key ?? '', ctx);
    if (brainId === undefined) throw new NotFoundError();
    return listReply(ctx, {
      count: async () =>
        Number(
          (
            await deps.readModels.query<{ n: string }>(
              'SELECT count(*) AS n FROM brain_collaborators WHERE brain_id = $1',
              [brainId],
            )
          ).rows[0]?.n ?? 0,
        ),
      fetch: async ({ limit, offset }) =>
        (
          await deps.readModels.query<CollaboratorRow>(
            `SELECT c.user_id, COALESCE(u.username, '') AS username, c.role, c.added_at
               FROM brain_collaborators c LEFT JOIN users u ON u.id = c.user_id
              WHERE c.brain_id = $1
              ORDER BY c.added_at, c.user_id LIMIT $2 OFFSET $3`,
            [brainId, limit, offset],
          )
        ).rows.map((row) =>
          collaboratorJson({ id: row.user_id, username: row.username }, row.role, row.added_at),
        ),
    });
  },
});

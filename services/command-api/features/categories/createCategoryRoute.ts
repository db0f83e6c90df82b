import type { RouteSpec, RequestContext } from '#shared/http/routeSpec';
import { PermissionDeniedError } from '#shared/errors/httpErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { createWithReservations } from '#shared/commandHandling/createWithReservations';
import { decideCategory } from '#shared/domain/categories/decide';
import {
  CATEGORY_NAME_SCOPE,
  categoryDecider,
  categoryStreamName,
  type CategoryCreated,
  type CategoryState,
} from '#shared/domain/categories/events';
import { normaliseName } from '#shared/domain/naming/naming';
import { discardRequestBody } from '#shared/multipart/discardRequestBody';
import { categoryJson, categorySchema } from '#shared/views/categoryViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { withStoredFile } from '#services/command-api/withStoredFile';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { CategoryBody, categoryFormSchema, readCategoryForm } from './readCategoryForm';

export const CATEGORY_NAME_TAKEN = 'category with this name already exists.';

/** How much of a refused upload is read and dropped so the client still gets its 403. */
const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

function requireStaff(ctx: RequestContext<unknown>): { userId: number; isStaff: boolean } {
  const principal = requirePrincipal(ctx);
  if (!principal.isStaff) {
    discardRequestBody(ctx.req, MAX_DISCARD_BYTES);
    throw new PermissionDeniedError('Only staff may create categories.');
  }
  return { userId: principal.userId, isStaff: true };
}

export const createCategoryRoute = (deps: CommandDeps): RouteSpec<typeof CategoryBody | undefined> => ({
  method: 'post',
  path: '/api/categories/',
  operationId: 'createCategory',
  summary: 'Create a category (staff)',
  description:
    'JSON, or multipart/form-data with an `image` file (checked by content). The name is stored lowercase and is unique case-insensitively. Give an uploaded image or an image_url, not both (400 non_field_errors).',
  tags: ['categories'],
  auth: 'required',
  body: CategoryBody,
  multipart: categoryFormSchema,
  responses: {
    201: { description: 'The new category', schema: categorySchema },
    400: { description: 'Invalid fields, a taken name, not an image, or both image and image_url' },
    403: { description: 'Not staff' },
  },
  async handler(ctx) {
    const actor = requireStaff(ctx);
    const { fields, imageKey } = ctx.req.is('multipart/form-data')
      ? await readCategoryForm(ctx, deps)
      : { fields: ctx.body!, imageKey: undefined };
    const cmd = commandContext(ctx);
    const now = deps.clock();
    const name = normaliseName(fields.name);
    // An uploaded image is deleted if the create fails, or rolls back later under a unit of work.
    return withStoredFile(deps, imageKey, async () => {
      const categoryId = await deps.ids.next('category', cmd);
      const stream = categoryStreamName(categoryId);
      const decide = (state: CategoryState) =>
        decideCategory(
          {
            type: 'CreateCategory',
            data: {
              categoryId,
              name,
              description: fields.description ?? '',
              imageKey: imageKey ?? null,
              imageUrl: fields.image_url || null,
              actor,
              now: now.toISOString(),
            },
          },
          state,
        );
      // Refusals (blank name, image and image_url) come before the name is reserved.
      decide(categoryDecider.initialState());
      const { created, position } = await createWithReservations(
        { store: deps.store, now, logger: deps.logger },
        stream,
        cmd,
        async (reserver) => {
          await reserver.reserve(CATEGORY_NAME_SCOPE, name, 'name', CATEGORY_NAME_TAKEN);
          const result = await handleCommand(deps.store, stream, categoryDecider, decide, cmd);
          return { created: result.events[0] as CategoryCreated, position: result.position };
        },
      );
      const d = created.data;
      const row = {
        id: d.categoryId,
        name: d.name,
        description: d.description,
        image_key: d.imageKey,
        image_url: d.imageUrl,
        brains_count: 0,
        atlases_count: 0,
      };
      return { status: 201, body: categoryJson(row, ctx.baseUrl), position };
    });
  },
});

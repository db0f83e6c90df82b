import { Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError, ValidationError } from '#shared/errors/httpErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { ATLAS_OR_CATEGORY, type UpdateBrain, decideBrain } from '#shared/domain/brains/decide';
import { type BrainState, brainDecider } from '#shared/domain/brains/events';
import { weakEtag } from '#shared/http/etag';
import { brainShapeBSchema } from '#shared/views/brainViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { brainShapeBFromState } from './brainShapeBFromState';
import { BrainBody, BrainReplaceBody, brainFields, brainName, colourOf, embargoUntilOf } from './brainFields';
import { brainCommandTarget, ifMatchOfVisibleBrain, onKeyedBrain } from './brainIdForKey';
import { resolveAtlas, resolveCategory } from './resolvePlacement';
import { readUpdateForm } from './readBrainForm';

type Mode = 'put' | 'patch';

/** PUT needs what create needs, except the file (decisions.md). */
function requireCreateFields(body: BrainBody): void {
  const errors: Record<string, string[]> = {};
  if (body.name === undefined) errors.name = ['This field is required.'];
  if (body.atlas == null && body.category === undefined) errors.non_field_errors = [ATLAS_OR_CATEGORY];
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

/**
 * PUT replaces every field (absent ones take their create defaults); PATCH changes those sent.
 * visibility and embargo_until are never defaulted: a PUT without them keeps them (a client that
 * does not know them must not make a private brain public).
 */
async function commandData(
  deps: CommandDeps,
  body: BrainBody,
  mode: Mode,
): Promise<Omit<UpdateBrain['data'], 'actor' | 'now'>> {
  const full = mode === 'put';
  const atlas =
    body.atlas === null || (full && body.atlas === undefined)
      ? null
      : await resolveAtlas(deps.store, body.atlas);
  return {
    name: body.name,
    description: body.description ?? (full ? '' : undefined),
    atlas: full || body.atlas !== undefined ? atlas : undefined,
    category: await resolveCategory(deps.store, body.category),
    isReference: body.is_reference ?? (full ? false : undefined),
    extraLink: body.extra_link ?? (full ? '' : undefined),
    website: body.website ?? (full ? '' : undefined),
    color: colourOf(body.color) ?? (full ? '' : undefined),
    verified: body.verified,
    visibility: body.visibility,
    embargoUntil: embargoUntilOf(body.embargo_until),
  };
}

export const updateBrainRoute = (
  deps: CommandDeps,
  mode: Mode,
): RouteSpec<typeof BrainBody | typeof BrainReplaceBody | undefined> => ({
  method: mode,
  path: '/api/brains/{key}/',
  operationId: mode === 'put' ? 'replaceBrain' : 'updateBrain',
  summary: mode === 'put' ? 'Replace a brain (uploader or staff)' : 'Change a brain (uploader or staff)',
  description: `${
    mode === 'put'
      ? 'Every field of create except the file: name and an atlas or a category are required; absent optional fields return to their defaults, except visibility and embargo_until, which stay as they are.'
      : 'Only the fields sent change; atlas null (JSON) files the brain under its category alone.'
  } JSON, url-encoded or multipart/form-data (text fields only). The uploader, staff and the brain's editors (403 otherwise); editors change the descriptive fields only, never visibility or embargo_until (403); only staff may change verified (403). A brain the caller may not see is 404. With If-Match (the ETag of GET), a change in between is 409. Answers shape B.`,
  tags: ['brains'],
  auth: 'required',
  body: mode === 'put' ? BrainReplaceBody : BrainBody,
  multipart: Type.Object(mode === 'put' ? { ...brainFields, name: brainName } : brainFields),
  responses: {
    200: { description: 'The brain, in shape B', schema: brainShapeBSchema },
    400: { description: 'Invalid fields, unknown or contradicting atlas and category' },
    403: {
      description:
        'Not the uploader, staff nor an editor; visibility changed by an editor; or verified changed by someone who is not staff',
    },
    404: { description: 'No brain with this key, or one the caller may not see' },
    409: { description: 'If-Match is stale' },
  },
  async handler(ctx) {
    const target = brainCommandTarget(ctx);
    const { actor, key } = target;
    const expectedRevision = await ifMatchOfVisibleBrain(ctx, deps.store, target, deps.clock());
    const body = ctx.req.is('multipart/form-data') ? await readUpdateForm(ctx, deps) : (ctx.body ?? {});
    if (mode === 'put') requireCreateFields(body);
    const data = await commandData(deps, body, mode);
    const result = await handleCommand(
      deps.store,
      target.stream,
      brainDecider,
      onKeyedBrain(key, (state: BrainState) =>
        decideBrain(
          { type: 'UpdateBrain', data: { ...data, actor, now: deps.clock().toISOString() } },
          state,
        ),
      ),
      commandContext(ctx),
      { expectedRevision },
    );
    if (result.state.status !== 'active') throw new NotFoundError();
    return {
      status: 200,
      body: await brainShapeBFromState(deps.store, result.state, ctx.baseUrl),
      headers: { ETag: weakEtag(result.revision) },
      position: result.position,
    };
  },
});

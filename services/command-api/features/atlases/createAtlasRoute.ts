import { type Static, Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { ConflictError, ValidationError } from '#shared/errors/httpErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { type Reserver, createWithReservations } from '#shared/commandHandling/createWithReservations';
import { decideAtlas } from '#shared/domain/atlases/decide';
import {
  ATLAS_SLUG_SCOPE,
  type AtlasCreated,
  atlasDecider,
  atlasStreamName,
} from '#shared/domain/atlases/events';
import { atlasSlugCandidates, normaliseHexColour } from '#shared/domain/naming/naming';
import { httpUrlField } from '#shared/http/httpUrlField';
import { atlasJson, atlasSchema } from '#shared/views/atlasViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { loadSpeciesRef } from './loadSpeciesRef';

export const AtlasBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  species: Type.Integer({ description: 'Species id.' }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  is_official: Type.Optional(Type.Boolean({ default: false })),
  verified: Type.Optional(Type.Boolean({ default: false })),
  version: Type.Optional(Type.String({ maxLength: 50 })),
  color: Type.Optional(Type.String({ maxLength: 7, description: '#rrggbb or #rgb' })),
  publication_url: Type.Optional(httpUrlField),
});
export type AtlasBody = Static<typeof AtlasBody>;

/** Slug candidates tried before giving up (each one taken means another atlas of that name). */
const MAX_SLUG_ATTEMPTS = 500;

async function reserveSlug(reserver: Reserver, name: string, version: string): Promise<string> {
  let previous: string | undefined;
  for (let attempt = 0; attempt < MAX_SLUG_ATTEMPTS; attempt++) {
    const slug = atlasSlugCandidates(name, version, attempt);
    if (slug === previous) continue;
    previous = slug;
    if (await reserver.tryReserve(ATLAS_SLUG_SCOPE, slug)) return slug;
  }
  throw new ConflictError('Too many atlases share this name; choose another name.');
}

function colourOf(color: string | undefined): string {
  if (color === undefined || color.trim() === '') return '';
  const hex = normaliseHexColour(color);
  if (!hex) throw ValidationError.field('color', 'Enter a hex colour: #rrggbb or #rgb.');
  return hex;
}

export const createAtlasRoute = (deps: CommandDeps): RouteSpec<typeof AtlasBody> => ({
  method: 'post',
  path: '/api/atlases/',
  operationId: 'createAtlas',
  summary: 'Create an atlas',
  description:
    'Any authenticated user. name is required (beyond the interface spec); the slug is derived from it (and the version where needed) and is unique. Only staff may set is_official or verified (403). color is #rrggbb or #rgb (stored lowercase #rrggbb); publication_url must be http(s).',
  tags: ['atlases'],
  auth: 'required',
  body: AtlasBody,
  responses: {
    201: { description: 'The new atlas', schema: atlasSchema },
    400: { description: 'Invalid fields or an unknown species' },
    403: { description: 'is_official or verified set by someone who is not staff' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    const body = ctx.body;
    const cmd = commandContext(ctx);
    const now = deps.clock();
    const color = colourOf(body.color);
    const version = (body.version ?? '').trim();
    const species = await loadSpeciesRef(deps.store, body.species);
    const atlasId = await deps.ids.next('atlas', cmd);
    const stream = atlasStreamName(atlasId);
    const decide = (slug: string) => (state: Parameters<typeof decideAtlas>[1]) =>
      decideAtlas(
        {
          type: 'CreateAtlas',
          data: {
            atlasId,
            name: body.name,
            slug,
            description: body.description ?? '',
            speciesId: species?.id,
            isOfficial: body.is_official ?? false,
            verified: body.verified ?? false,
            version,
            color,
            publicationUrl: body.publication_url ?? '',
            actor: { userId: principal.userId, isStaff: principal.isStaff },
            now: now.toISOString(),
          },
        },
        state,
      );
    // Refusals (403, unknown species) come before any slug is reserved.
    decide('')(atlasDecider.initialState());
    const { created, position } = await createWithReservations(
      { store: deps.store, now, logger: deps.logger },
      stream,
      cmd,
      async (reserver) => {
        const slug = await reserveSlug(reserver, body.name, version);
        const result = await handleCommand(deps.store, stream, atlasDecider, decide(slug), cmd);
        return { created: result.events[0] as AtlasCreated, position: result.position };
      },
    );
    const d = created.data;
    const row = {
      id: d.atlasId,
      name: d.name,
      slug: d.slug,
      description: d.description,
      species: species!,
      is_official: d.isOfficial,
      verified: d.verified,
      version: d.version,
      color: d.color,
      brains_count: 0,
      publication_url: d.publicationUrl,
    };
    return { status: 201, body: atlasJson(row), position };
  },
});

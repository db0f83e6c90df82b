import { type Static, Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { PermissionDeniedError } from '#shared/errors/httpErrors';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { createWithReservations } from '#shared/commandHandling/createWithReservations';
import { decideSpecies } from '#shared/domain/species/decide';
import {
  SPECIES_NAME_SCOPE,
  SPECIES_SCIENTIFIC_NAME_SCOPE,
  type SpeciesCreated,
  type SpeciesState,
  speciesDecider,
  speciesStreamName,
} from '#shared/domain/species/events';
import { formatScientificName, normaliseName } from '#shared/domain/naming/naming';
import { speciesJson, speciesSchema } from '#shared/views/speciesViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';
import { resolveCategory } from './resolveCategory';

export const SpeciesBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scientific_name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  category: Type.Unsafe<number | string>({
    type: ['integer', 'string'],
    minLength: 1,
    maxLength: 100,
    description: 'Category id, or its name (case-insensitive).',
  }),
});
export type SpeciesBody = Static<typeof SpeciesBody>;

export const SPECIES_NAME_TAKEN = 'species with this name already exists.';
export const SCIENTIFIC_NAME_TAKEN = 'species with this scientific name already exists.';

export const createSpeciesRoute = (deps: CommandDeps): RouteSpec<typeof SpeciesBody> => ({
  method: 'post',
  path: '/api/species/',
  operationId: 'createSpecies',
  summary: 'Create a species (staff)',
  description:
    'Beyond the interface spec. name is stored lowercase, scientific_name as "Genus species"; both are unique case-insensitively. category is a category id or name.',
  tags: ['species'],
  auth: 'required',
  body: SpeciesBody,
  responses: {
    201: { description: 'The new species', schema: speciesSchema },
    400: { description: 'Invalid fields, a taken name or scientific name, or an unknown category' },
    403: { description: 'Not staff' },
  },
  async handler(ctx) {
    const principal = requirePrincipal(ctx);
    if (!principal.isStaff) throw new PermissionDeniedError('Only staff may create species.');
    const body = ctx.body;
    const cmd = commandContext(ctx);
    const now = deps.clock();
    const name = normaliseName(body.name);
    const scientificName = formatScientificName(body.scientific_name);
    const category = await resolveCategory(deps.store, body.category);
    const speciesId = await deps.ids.next('species', cmd);
    const stream = speciesStreamName(speciesId);
    const decide = (state: SpeciesState) =>
      decideSpecies(
        {
          type: 'CreateSpecies',
          data: {
            speciesId,
            name,
            scientificName,
            description: body.description ?? '',
            categoryId: category?.id,
            actor: { userId: principal.userId, isStaff: principal.isStaff },
            now: now.toISOString(),
          },
        },
        state,
      );
    // Refusals (blank names, unknown category) come before any name is reserved.
    decide(speciesDecider.initialState());
    const { created, position } = await createWithReservations(
      { store: deps.store, now, logger: deps.logger },
      stream,
      cmd,
      async (reserver) => {
        await reserver.reserve(SPECIES_NAME_SCOPE, name, 'name', SPECIES_NAME_TAKEN);
        await reserver.reserve(
          SPECIES_SCIENTIFIC_NAME_SCOPE,
          scientificName,
          'scientific_name',
          SCIENTIFIC_NAME_TAKEN,
        );
        const result = await handleCommand(deps.store, stream, speciesDecider, decide, cmd);
        return { created: result.events[0] as SpeciesCreated, position: result.position };
      },
    );
    const d = created.data;
    const body201 = speciesJson({
      id: d.speciesId,
      name: d.name,
      scientific_name: d.scientificName,
      description: d.description,
      category_id: d.categoryId,
      category_name: category?.name ?? '',
      brains: [],
      atlases: [],
      brains_count: 0,
      atlases_count: 0,
    });
    return { status: 201, body: body201, position };
  },
});

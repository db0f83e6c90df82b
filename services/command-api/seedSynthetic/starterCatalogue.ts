import { randomBytes, randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { Principal } from '#shared/auth/principal';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import { findReservationOwner } from '#shared/commandHandling/reserveValue';
import { systemContext } from '#shared/commandHandling/commandContext';
import { ATLAS_SLUG_SCOPE, atlasDecider } from '#shared/domain/atlases/events';
import { CATEGORY_NAME_SCOPE } from '#shared/domain/categories/events';
import { SPECIES_SCIENTIFIC_NAME_SCOPE, speciesDecider } from '#shared/domain/species/events';
import { userDecider } from '#shared/domain/accounts/events';
import { atlasSlugCandidates, formatScientificName, normaliseName } from '#shared/domain/naming/naming';
import type { RequestContext, RouteSpec } from '#shared/http/routeSpec';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { createCategoryRoute } from '#services/command-api/features/categories/createCategoryRoute';
import { createSpeciesRoute } from '#services/command-api/features/species/createSpeciesRoute';
import { createAtlasRoute } from '#services/command-api/features/atlases/createAtlasRoute';
import { registerUser } from '#services/command-api/features/accounts/registerUser';
import {
  type StaffAccount,
  ensureConfiguredStaff,
} from '#services/command-api/features/accounts/ensureStaffAccount';
import { SEED_CATALOGUE } from '#services/command-api/seedCatalogue';
import { SeedError } from '#services/command-api/seedHttp';
import type { SyntheticPlacement } from './syntheticBrains';

const idOf = (stream: string): number => Number(stream.slice(stream.lastIndexOf('-') + 1));

async function ownerId(deps: CommandDeps, scope: string, value: string): Promise<number | undefined> {
  const owner = await findReservationOwner(deps.store, scope, value);
  return owner === undefined ? undefined : idOf(owner);
}

/**
 * Runs a create route's handler in process for `principal`, as if it had come over HTTP with a
 * JSON body: the same validation-free path the route takes after ajv (the bodies here are fixed
 * and valid), so the events are exactly those of `npm run seed` over HTTP.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any route's body type
async function runCreate(route: RouteSpec<any>, principal: Principal, body: unknown): Promise<unknown> {
  const req = { is: () => false, get: () => undefined } as unknown as Request;
  const ctx: RequestContext<never> = {
    req,
    body: body as never,
    query: {},
    params: {},
    principal,
    requestId: `seed-${randomUUID()}`,
    baseUrl: 'http://localhost',
    signal: new AbortController().signal, // nobody hangs up on the seed
  };
  const reply = await route.handler(ctx);
  return reply.body;
}

/**
 * The staff account that files the starter catalogue when some of it is missing: the configured
 * ADMIN_* one, ensured as every process that accepts writes ensures it at start-up.
 */
async function staffPrincipal(deps: CommandDeps, admin: StaffAccount | undefined): Promise<Principal> {
  if (!admin)
    throw new SeedError(
      'the starter catalogue (npm run seed) is not in this database and there is no staff account to file it: ' +
        'set ADMIN_EMAIL and ADMIN_PASSWORD as for the service',
    );
  await ensureConfiguredStaff(admin, deps, deps.logger);
  const adminEmail = admin.email;
  const userId = await ownerId(deps, 'email', adminEmail);
  if (userId === undefined) throw new SeedError(`the staff account ${adminEmail} could not be found`);
  const { state } = await loadAggregate(deps.store, `user-${userId}`, userDecider);
  if (state.status !== 'registered' || !state.isStaff)
    throw new SeedError(`ADMIN_EMAIL ${adminEmail} is not a staff account`);
  return {
    userId,
    username: state.username,
    email: state.email,
    isStaff: true,
    tokenId: 'seed',
    tokenKind: 'login',
  };
}

/**
 * The starter catalogue's categories, species and atlases (SEED_CATALOGUE), found by their unique
 * names, scientific names and slugs, and created through the create routes' own code where
 * missing (as `npm run seed` over HTTP would); returns where synthetic brains are filed: each atlas,
 * and each category alone (one brain in five).
 */
export async function ensureStarterCatalogue(
  deps: CommandDeps,
  admin: StaffAccount | undefined,
): Promise<SyntheticPlacement[]> {
  let staff: Principal | undefined;
  const asStaff = async () => (staff ??= await staffPrincipal(deps, admin));
  const categories = new Map<string, number>();
  for (const category of SEED_CATALOGUE.categories) {
    let id = await ownerId(deps, CATEGORY_NAME_SCOPE, normaliseName(category.name));
    if (id === undefined) {
      const body = await runCreate(createCategoryRoute(deps), await asStaff(), category);
      id = (body as { id: number }).id;
    }
    categories.set(category.name, id);
  }
  const species = new Map<string, { id: number; name: string; categoryId: number }>();
  for (const each of SEED_CATALOGUE.species) {
    let id = await ownerId(deps, SPECIES_SCIENTIFIC_NAME_SCOPE, formatScientificName(each.scientificName));
    if (id === undefined) {
      const body = await runCreate(createSpeciesRoute(deps), await asStaff(), {
        name: each.name,
        scientific_name: each.scientificName,
        description: each.description,
        category: categories.get(each.category)!,
      });
      id = (body as { id: number }).id;
    }
    const { state } = await loadAggregate(deps.store, `species-${id}`, speciesDecider);
    if (state.status !== 'created') throw new SeedError(`species ${each.scientificName} is not there`);
    species.set(each.scientificName, { id, name: normaliseName(each.name), categoryId: state.categoryId });
  }
  const placements: SyntheticPlacement[] = [];
  for (const atlas of SEED_CATALOGUE.atlases) {
    const of = species.get(atlas.species)!;
    let id = await ownerId(deps, ATLAS_SLUG_SCOPE, atlasSlugCandidates(atlas.name, atlas.version, 0));
    if (id === undefined) {
      const body = await runCreate(createAtlasRoute(deps), await asStaff(), {
        name: atlas.name,
        species: of.id,
        description: atlas.description,
        version: atlas.version,
        color: atlas.color,
        publication_url: atlas.publicationUrl,
        is_official: true,
        verified: true,
      });
      id = (body as { id: number }).id;
    }
    const { state } = await loadAggregate(deps.store, `atlas-${id}`, atlasDecider);
    if (state.status !== 'created') throw new SeedError(`atlas ${atlas.name} is not there`);
    const placement = { atlasId: id, speciesId: of.id, categoryId: of.categoryId, speciesName: of.name };
    // Four in five brains are filed under an atlas: four placements per atlas, one per category.
    placements.push(placement, placement, placement, placement);
  }
  const atlases = placements.length / 4;
  for (const categoryId of categories.values())
    for (let i = 0; i < Math.round(atlases / categories.size); i++)
      placements.push({ atlasId: null, speciesId: null, categoryId, speciesName: '' });
  return placements;
}

/** How many researchers upload the synthetic brains. */
export const SEED_UPLOADERS = 200;
const uploaderEmail = (n: number): string => `seed-researcher-${n}@example.org`;

/**
 * The researchers synthetic brains are uploaded by (seed-researcher-N@example.org), registered as
 * registration does (reserved email and username) when missing. Nobody knows their password: all
 * share the hash of one random secret thrown away here.
 */
export async function ensureUploaders(deps: CommandDeps): Promise<number[]> {
  const ids: number[] = [];
  let passwordHash: string | undefined;
  const ctx = systemContext('seed-synthetic');
  for (let n = 1; n <= SEED_UPLOADERS; n++) {
    const existing = await ownerId(deps, 'email', uploaderEmail(n));
    if (existing !== undefined) {
      ids.push(existing);
      continue;
    }
    passwordHash ??= await deps.passwords.hash(randomBytes(24).toString('base64url'));
    const { user } = await registerUser(
      { store: deps.store, ids: deps.ids, now: deps.clock(), logger: deps.logger },
      {
        email: uploaderEmail(n),
        username: `seed-researcher-${n}`,
        firstName: pick(FIRST_NAMES, n),
        lastName: pick(LAST_NAMES, n * 7),
        passwordHash,
        isStaff: false,
      },
      ctx,
    );
    ids.push(user.userId);
  }
  return ids;
}

const FIRST_NAMES = [
  'Ada',
  'Santiago',
  'Camillo',
  'Korbinian',
  'Rita',
  'Wilder',
  'Brenda',
  'Oskar',
  'Cécile',
  'Tomás',
];
const LAST_NAMES = [
  'Ramón',
  'Golgi',
  'Brodmann',
  'Vogt',
  'Penfield',
  'Milner',
  'Levi',
  'Nissl',
  'Kandel',
  'Broca',
  'Cajal',
];
const pick = (values: readonly string[], n: number): string => values[n % values.length]!;

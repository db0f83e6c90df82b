import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SeedError, type SeedReply, SeedHttp } from './seedHttp';
import {
  type SeedAtlas,
  type SeedCatalogue,
  type SeedCategory,
  type SeedSpecies,
  SEED_CATALOGUE,
} from './seedCatalogue';

export interface SeedOptions {
  /** The running service, e.g. http://localhost:8000. */
  readonly url: string;
  /** A staff account: only staff create categories and species, and mark atlases official. */
  readonly email: string;
  readonly password: string;
  readonly catalogue?: SeedCatalogue;
}

export interface SeedSummary {
  readonly created: number;
  readonly existing: number;
}

type Outcome = 'created' | 'existing';

/**
 * The key of one seed write: the same item and body give the same key, so a retry after a lost
 * reply (or a rerun within the service's replay window) is answered from the record, never
 * executed twice; a changed body gives a new key instead of a 422.
 */
export function seedIdempotencyKey(kind: string, body: unknown): string {
  return `seed-${kind}-${createHash('sha256').update(JSON.stringify(body)).digest('hex')}`;
}

/** How long a species refused as a duplicate may take to become readable (a racing writer's). */
const DUPLICATE_WAIT_MS = 15_000;
const DUPLICATE_POLL_MS = 200;

const ALREADY_EXISTS = /already exists/i;

function alreadyExists(reply: SeedReply): boolean {
  return reply.status === 400 && ALREADY_EXISTS.test(JSON.stringify(reply.body));
}

function refused(what: string, reply: SeedReply): SeedError {
  return new SeedError(`could not create ${what}: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
}

/** POSTs one item; "created" only when this call wrote it (not a replay, not a duplicate). */
async function create(http: SeedHttp, path: string, kind: string, what: string, body: object) {
  const reply = await http.post(path, body, seedIdempotencyKey(kind, body));
  if (reply.status === 201) return { outcome: reply.replayed ? 'existing' : 'created', reply } as const;
  if (alreadyExists(reply)) return { outcome: 'existing', reply } as const;
  throw refused(what, reply);
}

async function readOrUndefined(http: SeedHttp, path: string): Promise<unknown> {
  const reply = await http.get(path);
  if (reply.status === 200) return reply.body;
  if (reply.status === 404) return undefined;
  throw new SeedError(`GET ${path} failed: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
}

async function logIn(http: SeedHttp, email: string, password: string): Promise<void> {
  const reply = await http.post('/api/auth/login/', { email, password });
  if (reply.status !== 200)
    throw new SeedError(
      `cannot log in as ${email} (HTTP ${reply.status}): check SEED_EMAIL and SEED_PASSWORD`,
    );
  const body = reply.body as { token: string; user: { is_staff?: boolean } };
  http.authenticate(body.token);
  if (body.user.is_staff !== true) {
    await logOut(http);
    throw new SeedError(
      `${email} is not a staff account: only staff may create categories and species. ` +
        'Grant staff with `npm run admin -- create-staff --email E --password P`, or set SEED_EMAIL/SEED_PASSWORD.',
    );
  }
}

/** Revokes the seed's login token: it has no use after the run. */
async function logOut(http: SeedHttp): Promise<void> {
  await http.post('/api/auth/logout/', {}).catch(() => undefined);
  http.authenticate(undefined);
}

async function seedCategory(http: SeedHttp, category: SeedCategory): Promise<Outcome> {
  if (await readOrUndefined(http, `/api/categories/${encodeURIComponent(category.name)}/`)) return 'existing';
  const body = { name: category.name, description: category.description };
  return (await create(http, '/api/categories/', 'category', `category ${category.name}`, body)).outcome;
}

const speciesPath = (scientificName: string) => `/api/species/${encodeURIComponent(scientificName)}/`;

/** The species' outcome and id (atlases refer to species by id). */
async function seedSpecies(http: SeedHttp, species: SeedSpecies): Promise<{ outcome: Outcome; id: number }> {
  const found = (await readOrUndefined(http, speciesPath(species.scientificName))) as
    { id: number } | undefined;
  if (found) return { outcome: 'existing', id: found.id };
  const body = {
    name: species.name,
    scientific_name: species.scientificName,
    description: species.description,
    category: species.category,
  };
  const what = `species ${species.scientificName}`;
  const { outcome, reply } = await create(http, '/api/species/', 'species', what, body);
  if (reply.status === 201) return { outcome, id: (reply.body as { id: number }).id };
  // A duplicate: ours, from a concurrent writer whose create may still be committing, or another
  // species holding our common name (then it never shows up under our scientific name).
  const deadline = Date.now() + DUPLICATE_WAIT_MS;
  for (;;) {
    const existing = (await readOrUndefined(http, speciesPath(species.scientificName))) as
      { id: number } | undefined;
    if (existing) return { outcome, id: existing.id };
    if (Date.now() >= deadline) throw refused(what, reply);
    await sleep(DUPLICATE_POLL_MS);
  }
}

async function seedAtlas(http: SeedHttp, atlas: SeedAtlas, speciesId: number): Promise<Outcome> {
  // Atlas names are not unique (the slug is); the seed's atlas is its name, species and version.
  const query = `?species=${speciesId}&name=${encodeURIComponent(atlas.name)}`;
  const listed = (await readOrUndefined(http, `/api/atlases/${query}`)) as { version: string }[] | undefined;
  if (listed?.some((a) => a.version === atlas.version)) return 'existing';
  const body = {
    name: atlas.name,
    species: speciesId,
    version: atlas.version,
    description: atlas.description,
    publication_url: atlas.publicationUrl,
    is_official: true,
    color: atlas.color,
  };
  return (await create(http, '/api/atlases/', 'atlas', `atlas ${atlas.name}`, body)).outcome;
}

async function seedAll(http: SeedHttp, catalogue: SeedCatalogue): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const category of catalogue.categories) outcomes.push(await seedCategory(http, category));
  const speciesIds = new Map<string, number>();
  for (const species of catalogue.species) {
    const { outcome, id } = await seedSpecies(http, species);
    outcomes.push(outcome);
    speciesIds.set(species.scientificName, id);
  }
  for (const atlas of catalogue.atlases) {
    const speciesId = speciesIds.get(atlas.species);
    if (speciesId === undefined) throw new SeedError(`atlas ${atlas.name}: no seed species ${atlas.species}`);
    outcomes.push(await seedAtlas(http, atlas, speciesId));
  }
  return outcomes;
}

/**
 * Writes the starter catalogue through the service's HTTP commands (never behind the event
 * store's back), skipping what is already there, so running it again creates nothing.
 */
export async function seedOverHttp(options: SeedOptions): Promise<SeedSummary> {
  const http = new SeedHttp(options.url);
  await logIn(http, options.email, options.password);
  try {
    const outcomes = await seedAll(http, options.catalogue ?? SEED_CATALOGUE);
    const created = outcomes.filter((o) => o === 'created').length;
    return { created, existing: outcomes.length - created };
  } finally {
    await logOut(http);
  }
}

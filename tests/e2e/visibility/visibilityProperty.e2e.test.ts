import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { CollaboratorRole, Visibility } from '#shared/domain/brains/visibility';
import { effectiveVisibility } from '#shared/domain/brains/visibility';
import { type ApiResponse, type Client, client, newUser } from '#tests/support/httpClient';
import { type CuratedService, CURATOR, startCuratedService } from '#tests/support/curatedService';
import { type TestService, startTestService } from '#tests/support/testService';
import { brainForm, createTaxonomy, nifti } from '#tests/e2e/brains/brainFixtures';
import {
  type BrainFilter,
  type Caller,
  CatalogueModel,
  type FacetCounts,
  type ModelBrain,
  type ModelUser,
  type Placement,
  facetCountsOfBody,
  facetsOf,
} from './visibilityModel';

/*
 * Issue 19, "Must show": a property-based test of the one rule. Random brains (public, private,
 * embargoed far ahead, embargoed a few seconds ahead so that the embargo ends during the run),
 * random collaborators and roles, random visibility changes, and random reads over every route of
 * the issue's item 3 by random callers (staff, users, anonymous), each checked against the
 * reference model (visibilityModel.ts, whose rule is canSeeBrain): nothing a caller may not see is
 * in any body, header, count or facet, and everything they may see is there. A brain a caller may
 * not see must answer exactly as a brain that does not exist (status, body, header names).
 *
 * Two instances on one database: one keeps list and search answers (LIST_CACHE_MB default, with
 * the processor, which records EmbargoLifted), one keeps none (LIST_CACHE_MB=0); every request
 * goes to either. Lists go through the SQL path, and through the search index with `search`
 * and/or `facets`. The model accumulates across runs (the database does), so later runs read a
 * larger catalogue. VISIBILITY_SEED=<the seed fast-check prints> draws the same commands again (when
 * an embargo a few seconds ahead ends depends on the machine's speed, so a replay is close, not
 * exact); VISIBILITY_RUNS changes the number of runs.
 */

const NUM_RUNS = Number(process.env.VISIBILITY_RUNS ?? 30);
const SEED = process.env.VISIBILITY_SEED ? Number(process.env.VISIBILITY_SEED) : Date.now() % 2 ** 31;
/** A request's server-side time lies within [sent, answered]; a little more for the clocks' reading. */
const CLOCK_MARGIN_MS = 150;
const WORDS = ['cortex', 'hippocampus', 'cerebellum', 'thalamus'] as const;
const SECOND_WORDS = ['mouse', 'zebrafish', 'macaque', 'ferret'] as const;
const GHOST_ID = 999_999_999;
const GHOST_READABLE = 'no-such-brain-999999999';

/** What the runs exercised (asserted at the end, so a run that tested little fails). */
const tally: Record<string, number> = {};
const count = (what: string) => (tally[what] = (tally[what] ?? 0) + 1);

interface Real {
  readonly instances: readonly { readonly name: string; readonly api: Client }[];
}

let cached: CuratedService;
let uncached: TestService;
let real: Real;
let model: CatalogueModel;

beforeAll(async () => {
  cached = await startCuratedService();
  // One database and one blob directory: two instances behind a load balancer.
  uncached = await startTestService(
    { LIST_CACHE_MB: '0', PROCESSOR_ENABLED: 'false', DATA_DIR: cached.service.dataDir },
    cached.service.databaseUrl,
  );
  const api = cached.api;
  real = {
    instances: [
      { name: 'cache on', api },
      { name: 'cache off', api: client(uncached.url) },
    ],
  };
  const staffMe = (await api.get('/api/auth/me/', { token: cached.staff })).body;
  const staff: ModelUser = {
    key: 'staff',
    id: staffMe.id,
    username: CURATOR.username,
    email: CURATOR.email,
    token: cached.staff,
    isStaff: true,
  };
  const users: ModelUser[] = [staff];
  for (let i = 0; i < 4; i++) {
    const u = await newUser(api);
    users.push({
      key: `u${i}`,
      id: u.id,
      username: u.username,
      email: u.email,
      token: u.token,
      isStaff: false,
    });
  }
  const [t0, t1] = [await createTaxonomy(api, cached.staff), await createTaxonomy(api, cached.staff)];
  const placement = (t: typeof t0): Placement => ({
    category: t.category,
    species: t.species as Placement['species'],
    atlas: t.atlas as Placement['atlas'],
  });
  model = new CatalogueModel(users, [
    placement(t0),
    placement(t1),
    { category: t0.category, species: null, atlas: null },
  ]);
}, 120_000);

afterAll(async () => {
  await uncached?.close();
  await cached?.service.close();
});

// ---------------------------------------------------------------------------------------------
// Requests and the checks every read shares

interface Timed {
  readonly res: ApiResponse;
  readonly sent: number;
  readonly answered: number;
}

async function timed(api: Client, path: string, caller: Caller): Promise<Timed> {
  const sent = Date.now();
  const res = await api.get(path, caller ? { token: caller.token } : {});
  return { res, sent, answered: Date.now() };
}

/** What the model expects early and late in the request's window; equal unless an embargo ends within it. */
function window<T>(t: Timed, expected: (nowMs: number) => T): { lo: T; hi: T; exact: boolean } {
  const lo = expected(t.sent - CLOCK_MARGIN_MS);
  const hi = expected(t.answered + CLOCK_MARGIN_MS);
  return { lo, hi, exact: isDeepStrictEqual(lo, hi) };
}

/**
 * Brains a list must hold (in the answer at both ends of the window) and may hold (at either end),
 * newest first: an embargo ending during the request adds a brain to most lists, and takes it out
 * of those filtered by `visibility=embargoed`.
 */
function listWindow(t: Timed, expected: (nowMs: number) => ModelBrain[]) {
  const { lo: early, hi: late, exact } = window(t, expected);
  const lateIds = new Set(late.map((b) => b.id));
  const lo = early.filter((b) => lateIds.has(b.id));
  const hi = [...early, ...late.filter((b) => !early.some((e) => e.id === b.id))].sort((x, y) => y.id - x.id);
  return { lo, hi, exact };
}

const who = (caller: Caller): string => (caller ? `${caller.key}(${caller.id})` : 'anonymous');

function fail(what: string, t: Timed, detail: string): never {
  throw new Error(`${what}: ${detail}\n  answer ${t.res.status}: ${t.res.text.slice(0, 600)}`);
}

const VOLATILE_HEADERS = new Set([
  'date',
  'x-request-id',
  'content-length',
  'etag',
  'keep-alive',
  'connection',
]);
const headerNames = (res: ApiResponse): string[] =>
  [...res.headers.keys()].filter((h) => !VOLATILE_HEADERS.has(h)).sort();

/** A brain the caller may not see answers as one that never existed: same status, body and headers. */
async function expectAbsent(
  what: string,
  t: Timed,
  api: Client,
  caller: Caller,
  ghostPath: string,
  keys: readonly string[],
) {
  count('answered as a missing brain');
  const ghost = await timed(api, ghostPath, caller);
  const normalise = (text: string, own: readonly string[]) =>
    own.reduce((acc, key) => acc.split(key).join('{key}'), text);
  const ghostKeys = [
    String(GHOST_ID),
    GHOST_READABLE,
    ghostPath.match(/[0-9a-f]{8}-[0-9a-f-]{27}/)?.[0] ?? '\0',
  ];
  if (t.res.status !== ghost.res.status)
    fail(what, t, `status ${t.res.status}, a brain that does not exist answers ${ghost.res.status}`);
  if (normalise(t.res.text, keys) !== normalise(ghost.res.text, ghostKeys))
    fail(what, t, `body differs from a missing brain's: ${ghost.res.text.slice(0, 300)}`);
  if (!isDeepStrictEqual(headerNames(t.res), headerNames(ghost.res)))
    fail(
      what,
      t,
      `headers ${headerNames(t.res).join(',')} differ from a missing brain's ${headerNames(ghost.res).join(',')}`,
    );
}

/** The ids a caller got must all be visible (at the window's end) and include all visible (at its start). */
function expectIds(
  what: string,
  t: Timed,
  ids: readonly number[],
  lo: readonly ModelBrain[],
  hi: readonly ModelBrain[],
) {
  const allowed = new Set(hi.map((b) => b.id));
  const leaked = ids.filter((id) => !allowed.has(id));
  if (leaked.length) fail(what, t, `reveals brain(s) ${facts(leaked)} the caller may not see`);
  if (new Set(ids).size !== ids.length) fail(what, t, `repeats brains: ${ids.join(', ')}`);
  const got = new Set(ids);
  const missing = lo.filter((b) => !got.has(b.id)).map((b) => b.id);
  if (missing.length) fail(what, t, `misses brain(s) ${facts(missing)} the caller may see`);
}

/** Brains as the model holds them, for a failure message. */
function facts(ids: readonly number[]): string {
  return ids
    .map((id) => {
      const b = model.brains.get(id) ?? model.deleted.find((d) => d.id === id);
      if (!b) return `${id} (unknown)`;
      const collaborators = JSON.stringify(Object.fromEntries(b.collaborators));
      return `${id} (${b.name}, uploader ${b.uploaderId}, ${b.visibility}${b.embargoUntil ? ` until ${b.embargoUntil}` : ''}, verified ${b.verified}, collaborators ${collaborators}${model.brains.has(id) ? '' : ', deleted'})`;
    })
    .join(', ');
}

function expectCount(what: string, t: Timed, label: string, count: unknown, lo: number, hi: number) {
  if (typeof count !== 'number' || count < lo || count > hi)
    fail(what, t, `${label} ${String(count)}, expected ${lo === hi ? lo : `${lo}..${hi}`}`);
}

function expectFacets(what: string, t: Timed, body: unknown, lo: FacetCounts, hi: FacetCounts) {
  const got = facetCountsOfBody(body);
  for (const facet of ['species', 'atlas', 'category', 'verified'] as const) {
    const keys = new Set([...Object.keys(got[facet]), ...Object.keys(hi[facet])]);
    for (const key of keys) {
      const count = got[facet][key] ?? 0;
      if (count < (lo[facet][key] ?? 0) || count > (hi[facet][key] ?? 0))
        fail(
          what,
          t,
          `facet ${facet} ${key}: ${count}, expected ${lo[facet][key] ?? 0}..${hi[facet][key] ?? 0}`,
        );
    }
  }
}

/** A brain's own fields as the caller got them: visibility as it reads now, embargo_until kept. */
function expectBrainFields(what: string, t: Timed, item: Record<string, unknown>, b: ModelBrain) {
  const { lo, hi } = window(t, (now) => effectiveVisibility(b, now));
  if (item.visibility !== lo && item.visibility !== hi)
    fail(what, t, `brain ${b.id} visibility ${String(item.visibility)}, expected ${lo}`);
  if (b.visibility === 'embargoed' && item.visibility === 'public') count('ended embargo read as public');
  if (effectiveVisibility(b, t.sent) !== 'public') count('non-public brain shown to who may see it');
  const until = item.embargo_until;
  if (
    b.visibility === 'embargoed' ? Date.parse(String(until)) !== Date.parse(b.embargoUntil!) : until !== null
  )
    fail(what, t, `brain ${b.id} embargo_until ${String(until)}, expected ${b.embargoUntil}`);
}

// ---------------------------------------------------------------------------------------------
// The reads

type ListRead = {
  kind: 'list';
  caller: number;
  instance: number;
  paged: boolean;
  page: number;
  pageSize: number;
  shape?: 'a' | 'b';
  filter: {
    atlas?: [number, 'id' | 'slug'];
    species?: number;
    category?: [number, 'id' | 'name'];
    uploader?: number;
    verified?: boolean;
    visibility?: Visibility;
  };
  search?: string;
  facets: boolean;
};

function listPath(read: ListRead): { path: string; filter: BrainFilter } {
  const params = new URLSearchParams();
  const f = read.filter;
  const filter: { -readonly [K in keyof BrainFilter]: BrainFilter[K] } = {};
  if (f.atlas) {
    const atlas = model.placements[f.atlas[0]]!.atlas!;
    params.set('atlas', f.atlas[1] === 'id' ? String(atlas.id) : atlas.slug);
    filter.atlas = atlas.id;
  }
  if (f.species !== undefined) {
    const species = model.placements[f.species]!.species!;
    params.set('species', species.scientific_name);
    filter.species = species.id;
  }
  if (f.category) {
    const category = model.placements[f.category[0]]!.category;
    params.set('category', f.category[1] === 'id' ? String(category.id) : category.name);
    filter.category = category.id;
  }
  if (f.uploader !== undefined) {
    params.set('uploader', String(model.users[f.uploader]!.id));
    filter.uploader = model.users[f.uploader]!.id;
  }
  if (f.verified !== undefined) params.set('verified', String(f.verified));
  filter.verified = f.verified;
  if (f.visibility) params.set('visibility', f.visibility);
  filter.visibility = f.visibility;
  if (read.search) params.set('search', read.search);
  filter.search = read.search;
  if (read.shape) params.set('shape', read.shape);
  if (read.paged) {
    params.set('page', String(read.page));
    params.set('page_size', String(read.pageSize));
    if (read.facets) params.set('facets', 'species,atlas,category,verified');
  }
  return { path: `/api/brains/?${params.toString()}`, filter };
}

let lastList: ListRead | undefined;

/** The last list read again by another caller, on the instance that keeps answers: a kept answer must not cross. */
async function checkListAgain(again: { caller: number }): Promise<void> {
  if (lastList && lastList.caller !== again.caller) {
    count('list read again by another caller');
    await checkList({ ...lastList, caller: again.caller, instance: 0 });
  }
}

async function checkList(read: ListRead): Promise<void> {
  lastList = read;
  const caller = callerOf(read.caller);
  const { api, name } = real.instances[read.instance]!;
  const { path, filter } = listPath(read);
  const what = `GET ${path} as ${who(caller)} on ${name}`;
  const t = await timed(api, path, caller);
  const expected = listWindow(t, (now) => model.listed(caller, filter, now));
  const { lo, hi } = expected;
  count(`list through ${read.search || read.facets ? 'the search index' : 'SQL'} on ${name}`);
  const total = t.res.headers.get('x-total-count');
  if (!read.paged) {
    if (t.res.status !== 200 || !Array.isArray(t.res.body)) fail(what, t, 'expected an array');
    const items = t.res.body as Record<string, unknown>[];
    expectIds(
      what,
      t,
      items.map((i) => Number(i.id)),
      lo,
      hi,
    );
    expectCount(what, t, 'X-Total-Count', Number(total), lo.length, hi.length);
    if (Number(total) !== items.length) fail(what, t, `X-Total-Count ${total} for ${items.length} items`);
    checkItems(what, t, items, !read.search);
    return;
  }
  const size = read.pageSize;
  if (expected.exact && read.page > 1 && (read.page - 1) * size >= lo.length) {
    if (t.res.status !== 404) fail(what, t, `a page past the last (${lo.length} brains) must be 404`);
    return;
  }
  if (t.res.status === 404 && !expected.exact && read.page > 1) return; // the last page moved as an embargo ended
  if (t.res.status !== 200) fail(what, t, 'expected 200');
  const body = t.res.body as { count: number; results: Record<string, unknown>[]; facets?: unknown };
  expectCount(what, t, 'count', body.count, lo.length, hi.length);
  if (String(body.count) !== total) fail(what, t, `X-Total-Count ${total} differs from count ${body.count}`);
  const ids = body.results.map((i) => Number(i.id));
  const allowed = new Set(hi.map((b) => b.id));
  const leaked = ids.filter((id) => !allowed.has(id));
  if (leaked.length) fail(what, t, `reveals brain(s) ${leaked.join(', ')} the caller may not see`);
  if (expected.exact) {
    const slice = lo.slice((read.page - 1) * size, read.page * size);
    if (read.search) {
      // Ranked by relevance: the first page holds `size` of the matches (all of them when they fit).
      if (ids.length !== slice.length) fail(what, t, `${ids.length} results, expected ${slice.length}`);
      if (lo.length <= size) expectIds(what, t, ids, lo, lo);
    } else if (
      !isDeepStrictEqual(
        ids,
        slice.map((b) => b.id),
      )
    )
      fail(what, t, `results ${ids.join(',')}, expected ${slice.map((b) => b.id).join(',')}`);
  }
  checkItems(what, t, body.results, false);
  if (read.facets) {
    if (!body.facets) fail(what, t, 'no facets');
    expectFacets(what, t, body.facets, facetsOf(lo), facetsOf(hi));
  }
}

function checkItems(what: string, t: Timed, items: readonly Record<string, unknown>[], newestFirst: boolean) {
  let previous = Infinity;
  for (const item of items) {
    const b = model.brains.get(Number(item.id));
    if (!b) fail(what, t, `lists brain ${String(item.id)}, which is not in the catalogue`);
    expectBrainFields(what, t, item, b);
    if (newestFirst && b.id > previous) fail(what, t, 'not newest first');
    previous = b.id;
  }
}

type BrainRead = {
  kind: 'brain';
  caller: number;
  instance: number;
  brain: number;
  route:
    | 'detail-id'
    | 'detail-readable'
    | 'detail-a'
    | 'as-of'
    | 'by-readable-id'
    | 'file'
    | 'preview'
    | 'history'
    | 'collaborators'
    | 'upload'
    | 'upload-download'
    | 'upload-preview'
    | 'upload-history'
    | 'upload-as-of';
};

/** The brain a pick names: one of the catalogue's, a deleted one, or one that never existed. */
function pickBrain(pick: number): ModelBrain | 'ghost' {
  const live = model.live();
  const all = [...live, ...model.deleted];
  if (pick % 7 === 6 || all.length === 0) return 'ghost';
  return all[pick % all.length]!;
}

function brainPaths(
  route: BrainRead['route'],
  b: ModelBrain | 'ghost',
): { path: string; ghost: string; keys: string[] } {
  const id = b === 'ghost' ? String(GHOST_ID) : String(b.id);
  const readable = b === 'ghost' ? GHOST_READABLE : b.readableId;
  const upload = b === 'ghost' ? randomUUID() : b.uploadId;
  const ghostUpload = randomUUID();
  const asOf = encodeURIComponent(new Date().toISOString());
  const byKey = (key: string, ghostKey: string, suffix: string, query = '') => ({
    path: `/api/brains/${key}/${suffix}${query}`,
    ghost: `/api/brains/${ghostKey}/${suffix}${query}`,
    keys: [key],
  });
  switch (route) {
    case 'detail-id':
      return byKey(id, String(GHOST_ID), '');
    case 'detail-readable':
      return byKey(readable, GHOST_READABLE, '');
    case 'detail-a':
      return byKey(id, String(GHOST_ID), '', '?shape=a');
    case 'as-of':
      return byKey(id, String(GHOST_ID), '', `?as_of=${asOf}`);
    case 'file':
      return byKey(id, String(GHOST_ID), 'file/');
    case 'preview':
      return byKey(id, String(GHOST_ID), 'preview/');
    case 'history':
      return byKey(id, String(GHOST_ID), 'history/');
    case 'collaborators':
      return byKey(readable, GHOST_READABLE, 'collaborators/');
    case 'by-readable-id':
      return {
        path: `/api/brains/by_readable_id/?readable_id=${readable}`,
        ghost: `/api/brains/by_readable_id/?readable_id=${GHOST_READABLE}`,
        keys: [readable],
      };
    default: {
      const suffix = {
        upload: '',
        'upload-download': 'download/',
        'upload-preview': 'preview/',
        'upload-history': 'history/',
        'upload-as-of': `?as_of=${asOf}`,
      }[route];
      return {
        path: `/api/file-uploads/${upload}/${suffix}`,
        ghost: `/api/file-uploads/${ghostUpload}/${suffix}`,
        keys: [upload],
      };
    }
  }
}

async function checkBrainRead(read: BrainRead): Promise<void> {
  const caller = callerOf(read.caller);
  const { api, name } = real.instances[read.instance]!;
  const b = pickBrain(read.brain);
  const { path, ghost, keys } = brainPaths(read.route, b);
  const what = `GET ${path} as ${who(caller)} on ${name}`;
  const t = await timed(api, path, caller);
  const live = b !== 'ghost' && model.brains.has(b.id);
  // A deleted brain's history stays readable by its uploader and staff (docs/audit.md).
  if (!live && b !== 'ghost' && read.route.endsWith('history')) return;
  const onUpload = read.route.startsWith('upload');
  const sees = window(
    t,
    (now) => live && (onUpload ? model.readsUpload(b, caller) : model.sees(b, caller, now)),
  );
  if (!sees.hi) return expectAbsent(what, t, api, caller, ghost, keys);
  if (!sees.lo && t.res.status === 404) return; // an embargo ended during the request
  const brain = b as ModelBrain;
  const status = t.res.status;
  switch (read.route) {
    case 'detail-id':
    case 'detail-readable':
    case 'detail-a':
    case 'as-of':
    case 'by-readable-id':
      if (status !== 200 || t.res.body.id !== brain.id) fail(what, t, `expected brain ${brain.id}`);
      return expectBrainFields(what, t, t.res.body, brain);
    case 'file':
    case 'upload-download':
      if (status !== 200) fail(what, t, 'expected the file');
      return;
    case 'upload':
    case 'upload-as-of':
      if (status !== 200 || t.res.body.id !== brain.uploadId)
        fail(what, t, `expected upload ${brain.uploadId}`);
      return;
    case 'preview':
    case 'upload-preview':
      // No preview until the processor has made one: then it answers as the brain's own "no preview".
      if (status !== 200 && status !== 404) fail(what, t, 'expected the preview or 404 before there is one');
      return;
    case 'history':
    case 'upload-history': {
      const owns = caller !== null && (caller.isStaff || caller.id === brain.uploaderId);
      const allowed = caller === null ? [401] : owns ? [200] : [200, 403];
      if (!allowed.includes(status)) fail(what, t, `expected ${allowed.join(' or ')}`);
      return;
    }
    case 'collaborators': {
      if (status !== 200) fail(what, t, 'expected the collaborators');
      const rows = (Array.isArray(t.res.body) ? t.res.body : t.res.body.results) as {
        user: { id: number };
        role: string;
      }[];
      const got = Object.fromEntries(rows.map((r) => [r.user.id, r.role]));
      if (!isDeepStrictEqual(got, Object.fromEntries(brain.collaborators)))
        fail(
          what,
          t,
          `collaborators ${JSON.stringify(got)}, expected ${JSON.stringify(Object.fromEntries(brain.collaborators))}`,
        );
      return;
    }
  }
}

/** Through the shape B detail's s3_url (the link a client follows): the file, for whoever sees the brain. */
async function checkS3Url(caller: Caller, instance: number, pick: number): Promise<void> {
  const b = pickBrain(pick);
  if (b === 'ghost' || !model.brains.has(b.id)) return;
  const { api, name } = real.instances[instance]!;
  const t = await timed(api, `/api/brains/${b.id}/`, caller);
  if (t.res.status !== 200) return; // who may not see it: checked by the detail reads
  const url = new URL(String(t.res.body.s3_url));
  const file = await timed(api, url.pathname + url.search, caller);
  const what = `s3_url of brain ${b.id} as ${who(caller)} on ${name}`;
  if (file.res.status !== 200) fail(what, file, 'the link must give the file to whoever sees the brain');
}

type CatalogueRead = {
  kind: 'catalogue';
  caller: number;
  instance: number;
  route: 'species' | 'species-detail' | 'categories' | 'atlases' | 'by-atlas-slug' | 'uploads';
  which: number;
};

async function checkCatalogueRead(read: CatalogueRead): Promise<void> {
  const caller = callerOf(read.caller);
  const { api, name } = real.instances[read.instance]!;
  const placement = model.placements[read.which % 2]!;
  const path = {
    species: '/api/species/',
    'species-detail': `/api/species/${encodeURIComponent(placement.species!.scientific_name)}/`,
    categories: '/api/categories/',
    atlases: '/api/atlases/',
    'by-atlas-slug': `/api/brains/by_atlas_slug/?slug=${placement.atlas!.slug}`,
    uploads: '/api/file-uploads/',
  }[read.route];
  const what = `GET ${path} as ${who(caller)} on ${name}`;
  const t = await timed(api, path, caller);
  const seen = (filter: BrainFilter) => listWindow(t, (now) => model.listed(caller, filter, now));
  switch (read.route) {
    case 'species':
    case 'species-detail': {
      const all = (read.route === 'species' ? t.res.body : [t.res.body]) as {
        id: number;
        brains: { id: number }[];
        brains_count: number;
      }[];
      for (const p of model.placements.slice(0, 2)) {
        const species = all.find((s) => s.id === p.species!.id);
        if (!species) {
          if (read.route === 'species') fail(what, t, `species ${p.species!.id} missing`);
          continue;
        }
        const { lo, hi } = seen({ species: p.species!.id });
        expectCount(
          what,
          t,
          `species ${species.id} brains_count`,
          species.brains_count,
          lo.length,
          hi.length,
        );
        // At most 100 compact brains, the oldest first, of those the caller may see.
        const ids = species.brains.map((x) => x.id);
        const allowed = new Set(hi.map((x) => x.id));
        const leaked = ids.filter((id) => !allowed.has(id));
        if (leaked.length) fail(what, t, `species ${species.id} reveals brain(s) ${leaked.join(', ')}`);
        const oldest = [...lo]
          .sort((x, y) => x.id - y.id)
          .slice(0, 100)
          .map((x) => x.id);
        if (lo.length === hi.length && !isDeepStrictEqual(ids, oldest))
          fail(what, t, `species ${species.id} brains ${ids.join(',')}, expected ${oldest.join(',')}`);
      }
      return;
    }
    case 'categories':
    case 'atlases': {
      const rows = t.res.body as { id: number; brains_count: number }[];
      for (const p of model.placements.slice(0, 2)) {
        const id = read.route === 'categories' ? p.category.id : p.atlas!.id;
        const row = rows.find((r) => r.id === id);
        if (!row) fail(what, t, `${read.route} ${id} missing`);
        const { lo, hi } = seen(read.route === 'categories' ? { category: id } : { atlas: id });
        expectCount(what, t, `${read.route} ${id} brains_count`, row.brains_count, lo.length, hi.length);
      }
      return;
    }
    case 'by-atlas-slug': {
      // decisions.md: the atlas's reference brain, else its oldest, among those the caller may see.
      const { lo, hi, exact } = seen({ atlas: placement.atlas!.id });
      const oldest = (list: readonly ModelBrain[]) => list[list.length - 1];
      if (hi.length === 0) {
        if (t.res.status !== 404) fail(what, t, 'no brain of the atlas is visible: expected 404');
        return;
      }
      if (!exact && t.res.status === 404 && lo.length === 0) return;
      const expected = exact ? [oldest(lo)!.id] : [oldest(lo)?.id, oldest(hi)!.id];
      if (t.res.status !== 200 || !expected.includes(t.res.body.id))
        fail(what, t, `expected brain ${expected.join(' or ')}`);
      return;
    }
    case 'uploads': {
      if (caller === null) {
        if (t.res.status !== 401) fail(what, t, 'expected 401');
        return;
      }
      const rows = (Array.isArray(t.res.body) ? t.res.body : t.res.body.results) as {
        id: string;
        associated_brain: number | null;
      }[];
      const readable = new Map(
        model
          .live()
          .filter((b) => model.readsUpload(b, caller))
          .map((b) => [b.uploadId, b]),
      );
      const leaked = rows.filter((r) => !readable.has(r.id));
      if (leaked.length)
        fail(what, t, `lists upload(s) ${leaked.map((r) => r.id).join(', ')} the caller may not read`);
      const own = model
        .live()
        .filter((b) => b.uploaderId === caller.id)
        .map((b) => b.uploadId);
      const ids = new Set(rows.map((r) => r.id));
      const missing = own.filter((id) => !ids.has(id));
      if (missing.length && rows.length < 1000) fail(what, t, `misses own upload(s) ${missing.join(', ')}`);
      return;
    }
  }
}

const callerOf = (index: number): Caller => model.users[index] ?? null;

// ---------------------------------------------------------------------------------------------
// The writes (each as its uploader or staff, as the contract allows; the model follows)

type VisibilityChoice = { visibility: Visibility; soonMs?: number };

const visibilityBody = (choice: VisibilityChoice): Record<string, string> =>
  choice.visibility === 'embargoed'
    ? {
        visibility: 'embargoed',
        embargo_until: new Date(Date.now() + (choice.soonMs ?? 365 * 24 * 3600 * 1000)).toISOString(),
      }
    : { visibility: choice.visibility };

function expectWrite(what: string, res: ApiResponse, statuses: readonly number[]) {
  if (!statuses.includes(res.status)) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 500)}`);
}

async function createBrain(w: {
  uploader: number;
  instance: number;
  placement: number;
  words: [number, number];
  choice: VisibilityChoice;
}) {
  const uploader = model.users[w.uploader]!;
  const placement = model.placements[w.placement]!;
  const { api } = real.instances[w.instance]!;
  const name = `${WORDS[w.words[0]]} ${SECOND_WORDS[w.words[1]]}`.replace(/^./, (c) => c.toUpperCase());
  const fields: Record<string, string | number> = { name, ...visibilityBody(w.choice) };
  if (placement.atlas) fields.atlas = placement.atlas.id;
  else fields.category = placement.category.id;
  const res = await api.post('/api/brains/', { token: uploader.token, body: brainForm(fields, nifti()) });
  expectWrite(`create ${JSON.stringify(fields)} as ${uploader.key}`, res, [201]);
  const uploads = await api.get(`/api/file-uploads/?associated_brain=${res.body.id}`, {
    token: uploader.token,
  });
  const uploadId = (Array.isArray(uploads.body) ? uploads.body : uploads.body.results)[0]?.id as
    string | undefined;
  if (!uploadId)
    throw new Error(`no file upload for brain ${res.body.id}: ${uploads.status} ${uploads.text}`);
  if (w.choice.soonMs === undefined && res.body.visibility !== w.choice.visibility)
    throw new Error(`created ${res.text}: visibility ${w.choice.visibility} expected`);
  model.brains.set(res.body.id, {
    id: res.body.id,
    readableId: res.body.readable_id,
    name,
    uploaderId: uploader.id,
    placement,
    uploadId,
    visibility: w.choice.visibility,
    embargoUntil: (res.body.embargo_until as string | null) ?? null,
    verified: false,
    collaborators: new Map(),
  });
}

/** The live brain a pick names (the writes act on the catalogue's brains only). */
const liveBrain = (pick: number): ModelBrain | undefined => {
  const live = model.live();
  return live.length ? live[pick % live.length] : undefined;
};

const actorOf = (b: ModelBrain, asStaff: boolean): ModelUser =>
  asStaff ? model.users[0]! : model.users.find((u) => u.id === b.uploaderId)!;

async function share(w: {
  brain: number;
  instance: number;
  asStaff: boolean;
  user: number;
  role: CollaboratorRole;
  byEmail: boolean;
}) {
  const b = liveBrain(w.brain);
  const user = model.users[1 + (w.user % 4)]!;
  if (!b || user.id === b.uploaderId) return;
  const actor = actorOf(b, w.asStaff);
  const res = await real.instances[w.instance]!.api.post(`/api/brains/${b.id}/collaborators/`, {
    token: actor.token,
    json: { user: w.byEmail ? user.email : user.username, role: w.role },
  });
  expectWrite(
    `share brain ${b.id} with ${user.key} as ${w.role} by ${actor.key}`,
    res,
    b.collaborators.has(user.id) ? [200] : [201],
  );
  if (res.body.user?.id !== user.id || res.body.role !== w.role)
    throw new Error(`share answered ${res.text}`);
  b.collaborators.set(user.id, w.role);
}

async function unshare(w: { brain: number; instance: number; asStaff: boolean; which: number }) {
  const b = liveBrain(w.brain);
  const ids = b ? [...b.collaborators.keys()] : [];
  if (!b || ids.length === 0) return;
  const userId = ids[w.which % ids.length]!;
  const actor = actorOf(b, w.asStaff);
  const res = await real.instances[w.instance]!.api.delete(`/api/brains/${b.id}/collaborators/${userId}/`, {
    token: actor.token,
  });
  expectWrite(`unshare brain ${b.id} from user ${userId} by ${actor.key}`, res, [204]);
  b.collaborators.delete(userId);
}

async function changeVisibility(w: {
  brain: number;
  instance: number;
  asStaff: boolean;
  choice: VisibilityChoice;
}) {
  const b = liveBrain(w.brain);
  if (!b) return;
  const actor = actorOf(b, w.asStaff);
  const body = visibilityBody(w.choice);
  const res = await real.instances[w.instance]!.api.patch(`/api/brains/${b.id}/`, {
    token: actor.token,
    json: body,
  });
  expectWrite(`PATCH brain ${b.id} ${JSON.stringify(body)} by ${actor.key}`, res, [200]);
  // `public` for an embargo that has ended (by the time of the answer) is no change: the brain
  // already reads as public, its embargo_until kept (decisions.md).
  const endedEmbargo =
    w.choice.visibility === 'public' &&
    b.visibility === 'embargoed' &&
    b.embargoUntil !== null &&
    Date.parse(b.embargoUntil) <= Date.now() &&
    res.body.embargo_until === b.embargoUntil;
  if (endedEmbargo) return;
  b.visibility = w.choice.visibility;
  b.embargoUntil = w.choice.visibility === 'embargoed' ? (res.body.embargo_until as string) : null;
}

async function verify(w: { brain: number; instance: number; verified: boolean }) {
  const b = liveBrain(w.brain);
  if (!b) return;
  const res = await real.instances[w.instance]!.api.patch(`/api/brains/${b.id}/`, {
    token: model.users[0]!.token,
    json: { verified: w.verified },
  });
  expectWrite(`verify brain ${b.id}`, res, [200]);
  b.verified = w.verified;
}

async function deleteBrain(w: { brain: number; instance: number; asStaff: boolean; really: boolean }) {
  const b = liveBrain(w.brain);
  if (!b || !w.really) return; // one draw in four deletes: the catalogue grows
  const actor = actorOf(b, w.asStaff);
  const res = await real.instances[w.instance]!.api.delete(`/api/brains/${b.id}/`, { token: actor.token });
  expectWrite(`delete brain ${b.id} by ${actor.key}`, res, [204]);
  model.brains.delete(b.id);
  model.deleted.push(b);
}

// ---------------------------------------------------------------------------------------------
// The commands fast-check draws

class Step implements fc.AsyncCommand<CatalogueModel, Real> {
  constructor(
    private readonly label: string,
    private readonly params: unknown,
    private readonly act: () => Promise<void>,
  ) {}
  check = () => true;
  run = () => this.act();
  toString = () => `${this.label} ${JSON.stringify(this.params)}`;
}

const step =
  <P>(label: string, act: (p: P) => Promise<void>) =>
  (p: P) =>
    new Step(label, p, () => act(p));

const caller = fc.nat({ max: 5 }); // 0 staff, 1..4 users, 5 anonymous
const instance = fc.nat({ max: 1 });
const pick = fc.nat({ max: 1_000_000 });
const visibilityChoice: fc.Arbitrary<VisibilityChoice> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ visibility: 'public' as const }) },
  { weight: 3, arbitrary: fc.constant({ visibility: 'private' as const }) },
  { weight: 2, arbitrary: fc.constant({ visibility: 'embargoed' as const }) },
  // Ends during the run: afterwards it must read as public everywhere, kept answers included.
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 2_500, max: 5_000 })
      .map((soonMs) => ({ visibility: 'embargoed' as const, soonMs })),
  },
);
const opt = <T>(arb: fc.Arbitrary<T>, freq = 4) => fc.option(arb, { nil: undefined, freq });

const listRead: fc.Arbitrary<ListRead> = fc
  .record({
    caller,
    instance,
    paged: fc.boolean(),
    page: fc.constantFrom(1, 1, 1, 2, 3),
    pageSize: fc.constantFrom(5, 100),
    shape: opt(fc.constantFrom('a' as const, 'b' as const), 2),
    filter: fc.record(
      {
        atlas: opt(fc.tuple(fc.nat({ max: 1 }), fc.constantFrom('id' as const, 'slug' as const))),
        species: opt(fc.nat({ max: 1 })),
        category: opt(fc.tuple(fc.nat({ max: 1 }), fc.constantFrom('id' as const, 'name' as const))),
        uploader: opt(fc.nat({ max: 4 })),
        verified: opt(fc.boolean(), 6),
        visibility: opt(fc.constantFrom<Visibility>('public', 'private', 'embargoed'), 3),
      },
      { requiredKeys: [] },
    ),
    search: opt(fc.constantFrom(...WORDS, ...SECOND_WORDS), 2),
    facets: fc.boolean(),
  })
  .map((r) => ({
    kind: 'list' as const,
    ...r,
    page: r.search ? 1 : r.page,
    pageSize: r.search ? 100 : r.pageSize,
  }));

const brainRead: fc.Arbitrary<BrainRead> = fc.record({
  kind: fc.constant('brain' as const),
  caller,
  instance,
  brain: pick,
  route: fc.constantFrom<BrainRead['route']>(
    'detail-id',
    'detail-readable',
    'detail-a',
    'as-of',
    'by-readable-id',
    'file',
    'preview',
    'history',
    'collaborators',
    'upload',
    'upload-download',
    'upload-preview',
    'upload-history',
    'upload-as-of',
  ),
});

const catalogueRead: fc.Arbitrary<CatalogueRead> = fc.record({
  kind: fc.constant('catalogue' as const),
  caller,
  instance,
  route: fc.constantFrom<CatalogueRead['route']>(
    'species',
    'species-detail',
    'categories',
    'atlases',
    'by-atlas-slug',
    'uploads',
  ),
  which: fc.nat({ max: 1 }),
});

const create = fc
  .record({
    uploader: fc.nat({ max: 4 }),
    instance,
    placement: fc.nat({ max: 2 }),
    words: fc.tuple(fc.nat({ max: 3 }), fc.nat({ max: 3 })),
    choice: visibilityChoice,
  })
  .map(step('create', createBrain));

const commands = [
  create,
  create,
  create,
  fc
    .record({
      brain: pick,
      instance,
      asStaff: fc.boolean(),
      user: fc.nat({ max: 3 }),
      role: fc.constantFrom<CollaboratorRole>('viewer', 'editor'),
      byEmail: fc.boolean(),
    })
    .map(step('share', share)),
  fc
    .record({ brain: pick, instance, asStaff: fc.boolean(), which: fc.nat({ max: 3 }) })
    .map(step('unshare', unshare)),
  fc
    .record({ brain: pick, instance, asStaff: fc.boolean(), choice: visibilityChoice })
    .map(step('visibility', changeVisibility)),
  fc.record({ brain: pick, instance, verified: fc.boolean() }).map(step('verify', verify)),
  fc
    .record({
      brain: pick,
      instance,
      asStaff: fc.boolean(),
      really: fc.constantFrom(true, false, false, false),
    })
    .map(step('delete', deleteBrain)),
  listRead.map(step('read list', checkList)),
  listRead.map(step('read list', checkList)),
  listRead.map(step('read list', checkList)),
  fc.record({ caller }).map(step('read the last list as another caller', checkListAgain)),
  brainRead.map(step('read brain', checkBrainRead)),
  brainRead.map(step('read brain', checkBrainRead)),
  catalogueRead.map(step('read catalogue', checkCatalogueRead)),
  fc
    .record({ caller, instance, brain: pick })
    .map(step('read s3_url', (r) => checkS3Url(callerOf(r.caller), r.instance, r.brain))),
];

test('no read reveals a brain its caller may not see, and every brain they may see is there', async () => {
  const property = fc.asyncProperty(
    fc.commands(commands, { maxCommands: 30, size: 'large' }),
    async (cmds) => {
      // The model and the database accumulate across runs: each run's writes and reads go on from the last.
      await fc.asyncModelRun(() => ({ model, real }), cmds);
    },
  );
  // Enough happened for the test to mean something.
  const minimums: Record<string, number> = {
    'answered as a missing brain': 10,
    'ended embargo read as public': 1,
    'non-public brain shown to who may see it': 5,
    ...Object.fromEntries(
      real.instances
        .flatMap((i) => [`list through SQL on ${i.name}`, `list through the search index on ${i.name}`])
        .map((k) => [k, 3]),
    ),
  };
  const short = () => Object.entries(minimums).filter(([what, n]) => (tally[what] ?? 0) < n);
  await fc.assert(property, { numRuns: NUM_RUNS, seed: SEED, endOnFailure: true, verbose: 1 });
  // A seed whose runs exercised too little of something goes on with more runs of the same
  // property (its own seeds, printed on a failure), at most three times, before the check below.
  for (let extra = 1; extra <= 3 && short().length > 0; extra++) {
    const seed = (SEED + extra) | 0;
    console.log(
      `seed ${SEED} exercised too little (${short()
        .map(([what]) => what)
        .join(', ')}): ${NUM_RUNS} more runs, seed ${seed}`,
    );
    await fc.assert(property, { numRuns: NUM_RUNS, seed, endOnFailure: true, verbose: 1 });
  }
  console.log(`seed ${SEED}, ${model.brains.size} brains (${model.deleted.length} deleted)`, tally);
  expect(model.brains.size + model.deleted.length).toBeGreaterThan(10);
  expect(short().map(([what, n]) => `${what}: ${tally[what] ?? 0} < ${n}`)).toEqual([]);
}, 300_000);

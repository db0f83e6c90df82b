import { type CuratedService, startCuratedService } from '#tests/support/curatedService';
import { type Client, newUser } from '#tests/support/httpClient';
import { waitFor } from '#tests/support/waitFor';
import { brainForm, createTaxonomy, nifti, type Taxonomy } from '#tests/e2e/brains/brainFixtures';

/**
 * GET /api/audit/events/ (decisions.md "Audit"): staff only, global order, every filter alone and
 * combined checked against the full log filtered here, bad values 400 on their field, the `next`
 * chain, NDJSON, and no secret in any entry.
 */
interface Entry {
  position: string;
  id: string;
  type: string;
  resource: { type: string; id: number | string } | null;
  revision: number | null;
  recorded_at: string;
  actor: { id: number; username: string | null } | null;
  request_id: string | null;
  data: Record<string, unknown>;
}

const EVENTS = '/api/audit/events/';
const INTERNAL = new Set([
  'ValueReserved',
  'ReservationReleased',
  'StreamFenced',
  'IdAllocated',
  'AccessTokenUsed',
  // The processor's lease renewals: on a busy machine the brain file's processing lasts long enough for one.
  'UploadProcessingLeaseRenewed',
]);

let world: CuratedService;
let api: Client;
let staff: string;
let user: Awaited<ReturnType<typeof newUser>>;
let taxonomy: Taxonomy;
let personalToken: string;
let brainId: number;
const REQUEST_ID = `audit-log-${process.pid}-${Date.now()}`;
/** The whole log (include_internal=true), and without bookkeeping. */
let everything: Entry[];
let visible: Entry[];

const positionKey = (position: string): [bigint, bigint] => {
  const [commit, prepare] = position.split('.');
  return [BigInt(commit!), BigInt(prepare!)];
};
const comparePositions = (a: string, b: string): number => {
  const [ac, ap] = positionKey(a);
  const [bc, bp] = positionKey(b);
  return ac !== bc ? (ac < bc ? -1 : 1) : ap === bp ? 0 : ap < bp ? -1 : 1;
};

/** Follows `next` from the first page to the last; every page checked for shape. */
async function followAll(query: string, token = staff): Promise<Entry[]> {
  const entries: Entry[] = [];
  let url: string | null = `${EVENTS}?${query}`;
  for (let pages = 0; url; pages++) {
    if (pages > 1000) throw new Error('next never ends');
    const res = await api.get(url.replace(world.service.url, ''), { token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['next', 'results']);
    entries.push(...(res.body.results as Entry[]));
    url = res.body.next as string | null;
    if (url) expect(url.startsWith(`${world.service.url}/api/audit/events/?`)).toBe(true);
  }
  return entries;
}

/** The NDJSON export as text (the test client would take `x-ndjson` for one JSON document). */
async function exported(query: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${world.service.url}${EVENTS}?${query}`, {
    headers: { Authorization: `Token ${staff}`, Accept: 'application/x-ndjson' },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const ids = (entries: readonly Entry[]): string[] => entries.map((e) => e.id);

beforeAll(async () => {
  world = await startCuratedService();
  api = world.api;
  staff = world.staff;
  taxonomy = await createTaxonomy(api, staff);
  user = await newUser(api);
  const token = await api.post('/api/tokens/', { token: user.token, json: { name: 'audit laptop' } });
  expect(token.status).toBe(201);
  personalToken = token.body.token as string;
  const brain = await api.post('/api/brains/', {
    token: personalToken,
    body: brainForm({ name: 'Audited brain', atlas: taxonomy.atlas.id }, nifti()),
    headers: { 'X-Request-Id': REQUEST_ID },
  });
  expect(brain.status).toBe(201);
  brainId = brain.body.id as number;
  const renamed = await api.patch(`/api/brains/${brainId}/`, {
    token: user.token,
    json: { name: 'Renamed brain' },
  });
  expect(renamed.status).toBe(200);
  // The file's processing ends before the log is read, so that no event comes after these answers.
  await waitFor(
    'the processing of the brain file, in the event log',
    async () => (await followAll('limit=1000')).map((e) => e.type),
    {
      timeoutMs: 90_000,
      intervalMs: 100,
      until: (types) =>
        types.includes('UploadProcessingCompleted') || types.includes('UploadProcessingFailed'),
    },
  );
  everything = await followAll('include_internal=true&limit=1000');
  visible = await followAll('limit=1000');
}, 120_000);

afterAll(() => world?.service.close());

describe('who may read the event log', () => {
  test('anonymous 401, a user 403, staff 200', async () => {
    const anonymous = await api.get(EVENTS);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBeTruthy();
    const forbidden = await api.get(EVENTS, { token: user.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ detail: expect.any(String) });
    expect(
      (await api.get(EVENTS, { token: personalToken, headers: { Accept: 'application/x-ndjson' } })).status,
    ).toBe(403);
    expect((await api.get(EVENTS, { token: staff })).status).toBe(200);
  });
});

describe('entries', () => {
  test('every event in strictly increasing global order, with the fields of decisions.md', () => {
    expect(everything.length).toBeGreaterThan(visible.length);
    for (let i = 1; i < everything.length; i++)
      expect(comparePositions(everything[i - 1]!.position, everything[i]!.position)).toBe(-1);
    for (const entry of everything) {
      expect(Object.keys(entry).sort()).toEqual(
        [
          'actor',
          'data',
          'id',
          'position',
          'recorded_at',
          'request_id',
          'resource',
          'revision',
          'type',
        ].sort(),
      );
      expect(entry.position).toMatch(/^\d+\.\d+$/);
      expect(entry.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Date(entry.recorded_at).toISOString()).toBe(entry.recorded_at);
    }
    const created = visible.find((e) => e.type === 'BrainCreated' && e.resource?.id === brainId)!;
    expect(created).toMatchObject({
      resource: { type: 'brain', id: brainId },
      revision: 0,
      actor: { id: user.id, username: user.username },
      request_id: REQUEST_ID,
    });
    const renamed = visible.filter((e) => e.resource?.type === 'brain' && e.resource.id === brainId);
    expect(renamed.map((e) => e.revision)).toEqual(renamed.map((_, i) => i));
    const issued = visible.find((e) => e.type === 'AccessTokenIssued' && e.actor?.id === user.id)!;
    expect(issued.resource).toEqual({ type: 'token', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    // The curator, made at start-up, is the system's doing.
    expect(visible.some((e) => e.type === 'UserRegistered' && e.actor === null)).toBe(true);
  });

  test('internal bookkeeping only with include_internal=true', () => {
    expect(visible.some((e) => INTERNAL.has(e.type))).toBe(false);
    expect(everything.some((e) => e.type === 'IdAllocated')).toBe(true);
    expect(everything.some((e) => e.type === 'ValueReserved')).toBe(true);
    expect(ids(everything.filter((e) => !INTERNAL.has(e.type)))).toEqual(ids(visible));
  });

  test('no secret or hash of one in any entry', async () => {
    const forbiddenKey = /^(passwordHash|tokenHash|password|secret|token)$/i;
    const scan = (value: unknown, path: string): void => {
      if (Array.isArray(value)) value.forEach((v, i) => scan(v, `${path}[${i}]`));
      else if (value !== null && typeof value === 'object')
        for (const [key, inner] of Object.entries(value)) {
          expect(`${path}.${key}`).not.toMatch(forbiddenKey.test(key) ? /.*/ : /^$/);
          scan(inner, `${path}.${key}`);
        }
    };
    const ndjson = await exported('include_internal=true');
    for (const text of [JSON.stringify(everything), ndjson.text]) {
      for (const secret of [user.password, user.token, personalToken, world.staff, 'curator-password'])
        expect(text).not.toContain(secret);
      expect(text).not.toMatch(/scrypt|\$argon|passwordHash|tokenHash/);
    }
    everything.forEach((e, i) => scan(e, `entry ${i}`));
    expect(everything.some((e) => e.type === 'UserRegistered' && e.data.email === undefined)).toBe(false);
  });
});

describe('filters, each alone and combined, against the full log', () => {
  const check = async (query: string, expected: readonly Entry[]): Promise<void> => {
    const answered = await followAll(`${query}&limit=7`);
    expect(ids(answered)).toEqual(ids(expected));
  };

  test('resource_type, with and without resource_id', async () => {
    await check(
      'resource_type=brain',
      visible.filter((e) => e.resource?.type === 'brain'),
    );
    await check(
      `resource_type=brain&resource_id=${brainId}`,
      visible.filter((e) => e.resource?.type === 'brain' && e.resource.id === brainId),
    );
    const tokenId = visible.find((e) => e.resource?.type === 'token')!.resource!.id as string;
    await check(
      `resource_type=token&resource_id=${tokenId.toUpperCase()}`,
      visible.filter((e) => e.resource?.type === 'token' && e.resource.id === tokenId),
    );
    await check(`resource_type=species&resource_id=${taxonomy.species.id}`, [
      visible.find((e) => e.type === 'SpeciesCreated' && e.resource?.id === taxonomy.species.id)!,
    ]);
    expect((await followAll('resource_type=atlas&resource_id=999999')).length).toBe(0);
  });

  test('type: one, several, unknown', async () => {
    await check(
      'type=BrainCreated',
      visible.filter((e) => e.type === 'BrainCreated'),
    );
    const several = new Set(['UserRegistered', 'BrainUpdated', 'CategoryCreated']);
    await check(
      'type=UserRegistered,%20BrainUpdated,CategoryCreated',
      visible.filter((e) => several.has(e.type)),
    );
    await check('type=NoSuchEvent', []);
    await check('type=IdAllocated', []);
    await check(
      'type=IdAllocated&include_internal=true',
      everything.filter((e) => e.type === 'IdAllocated'),
    );
  });

  test('actor and request_id', async () => {
    const byUser = visible.filter((e) => e.actor?.id === user.id);
    expect(byUser.map((e) => e.type)).toEqual(expect.arrayContaining(['BrainCreated', 'AccessTokenIssued']));
    await check(`actor=${user.id}`, byUser);
    const inRequest = everything.filter((e) => e.request_id === REQUEST_ID);
    expect(inRequest.some((e) => INTERNAL.has(e.type))).toBe(true);
    await check(
      `request_id=${REQUEST_ID}`,
      visible.filter((e) => e.request_id === REQUEST_ID),
    );
    await check(`request_id=${REQUEST_ID}&include_internal=true`, inRequest);
  });

  test('since (inclusive) and until (exclusive)', async () => {
    const at = (e: Entry): number => Date.parse(e.recorded_at);
    const middle = visible[Math.floor(visible.length / 2)]!;
    const later = visible[Math.floor((visible.length * 3) / 4)]!;
    const since = middle.recorded_at;
    const until = later.recorded_at;
    await check(
      `since=${since}`,
      visible.filter((e) => at(e) >= at(middle)),
    );
    await check(
      `until=${until}`,
      visible.filter((e) => at(e) < at(later)),
    );
    await check(
      `since=${since}&until=${until}`,
      visible.filter((e) => at(e) >= at(middle) && at(e) < at(later)),
    );
    await check(`since=${since}&until=${since}`, []);
    await check('since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00%2B02:00', []);
    await check('since=2999-01-01T00:00:00Z', []);
    await check('until=2999-01-01T00:00:00Z', visible);
  });

  test('after: right after a position, also one not in the table', async () => {
    const k = 5;
    await check(`after=${visible[k]!.position}`, visible.slice(k + 1));
    await check('after=0.0', visible);
    await check('after=-1.-1', visible);
    await check('after=9223372036854775807.9223372036854775807', []);
    // A well-formed position between two events: the results start after the earlier.
    const i = everything.findIndex((e, j) => {
      const next = everything[j + 1];
      if (!next) return false;
      const [c, p] = positionKey(e.position);
      return comparePositions(`${c}.${p + 1n}`, next.position) < 0;
    });
    expect(i).toBeGreaterThanOrEqual(0);
    const [c, p] = positionKey(everything[i]!.position);
    await check(`after=${c}.${p + 1n}&include_internal=true`, everything.slice(i + 1));
  });

  test('filters combine with AND', async () => {
    const since = visible[3]!.recorded_at;
    await check(
      `actor=${user.id}&resource_type=brain&type=BrainCreated,BrainUpdated&since=${since}`,
      visible.filter(
        (e) =>
          e.actor?.id === user.id &&
          e.resource?.type === 'brain' &&
          ['BrainCreated', 'BrainUpdated'].includes(e.type) &&
          Date.parse(e.recorded_at) >= Date.parse(since),
      ),
    );
    await check(`actor=${user.id}&request_id=${REQUEST_ID}&type=BrainCreated`, [
      visible.find((e) => e.type === 'BrainCreated' && e.request_id === REQUEST_ID)!,
    ]);
    await check(`actor=${user.id}&type=CategoryCreated`, []);
  });
});

describe('paging', () => {
  test('limit, and next repeating the filters up to the last matching event', async () => {
    const first = await api.get(`${EVENTS}?limit=2&type=UserRegistered,BrainCreated`, { token: staff });
    expect(first.body.results).toHaveLength(2);
    const next = new URL(first.body.next as string);
    expect(Object.fromEntries(next.searchParams)).toEqual({
      limit: '2',
      type: 'UserRegistered,BrainCreated',
      after: (first.body.results as Entry[])[1]!.position,
    });
    const matching = visible.filter((e) => ['UserRegistered', 'BrainCreated'].includes(e.type));
    expect(ids(await followAll('limit=2&type=UserRegistered,BrainCreated'))).toEqual(ids(matching));
    // Exactly the matching events on the last page: next is null (limit + 1 was looked for).
    const exact = await api.get(`${EVENTS}?limit=${matching.length}&type=UserRegistered,BrainCreated`, {
      token: staff,
    });
    expect(exact.body.results).toHaveLength(matching.length);
    expect(exact.body.next).toBeNull();
    const beyond = await api.get(`${EVENTS}?limit=${matching.length - 1}&type=UserRegistered,BrainCreated`, {
      token: staff,
    });
    expect(beyond.body.next).not.toBeNull();
    const defaults = await api.get(EVENTS, { token: staff });
    expect(ids(defaults.body.results)).toEqual(ids(visible.slice(0, 100)));
  });
});

describe('bad values: 400 on the field', () => {
  test.each([
    ['resource_type=bogus', 'resource_type'],
    ['resource_id=3', 'resource_id'],
    ['resource_type=brain&resource_id=abc', 'resource_id'],
    ['resource_type=brain&resource_id=0', 'resource_id'],
    ['resource_type=brain&resource_id=99999999999', 'resource_id'],
    ['resource_type=token&resource_id=12', 'resource_id'],
    ['resource_type=file_upload&resource_id=not-a-uuid', 'resource_id'],
    ['type=Brain-Created', 'type'],
    ['type=BrainCreated,,BrainUpdated', 'type'],
    [`type=${Array.from({ length: 51 }, (_, i) => `T${i}`).join(',')}`, 'type'],
    ['actor=abc', 'actor'],
    ['actor=0', 'actor'],
    ['actor=-4', 'actor'],
    [`request_id=${'r'.repeat(201)}`, 'request_id'],
    ['since=yesterday', 'since'],
    ['since=2026-01-01', 'since'],
    ['until=2026-13-01T00:00:00Z', 'until'],
    ['after=abc', 'after'],
    ['after=12', 'after'],
    ['after=99999999999999999999.1', 'after'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['include_internal=maybe', 'include_internal'],
  ])('%s', async (query, field) => {
    for (const accept of ['application/json', 'application/x-ndjson']) {
      const res = await api.get(`${EVENTS}?${query}`, { token: staff, headers: { Accept: accept } });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual([field]);
      expect(res.body[field]).toEqual([expect.any(String)]);
    }
  });

  test('several bad fields are named together', async () => {
    const res = await api.get(`${EVENTS}?actor=x&after=y&type=a-b&resource_id=1`, { token: staff });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['actor', 'after', 'resource_id', 'type']);
  });
});

describe('NDJSON', () => {
  const ndjson = exported;
  const lines = (text: string): Entry[] =>
    text === ''
      ? []
      : text
          .replace(/\n$/, '')
          .split('\n')
          .map((l) => JSON.parse(l) as Entry);

  test('every matching event, one entry per line, no paging', async () => {
    const all = await ndjson('include_internal=true');
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(all.text.endsWith('\n')).toBe(true);
    expect(lines(all.text)).toEqual(everything);
    expect(lines((await ndjson('')).text)).toEqual(visible);
    expect(lines((await ndjson('type=BrainCreated,BrainUpdated')).text)).toEqual(
      visible.filter((e) => ['BrainCreated', 'BrainUpdated'].includes(e.type)),
    );
  });

  test('limit and after still apply; nothing matching is an empty body', async () => {
    expect(lines((await ndjson('limit=5')).text)).toEqual(visible.slice(0, 5));
    expect(lines((await ndjson(`after=${visible[2]!.position}&limit=3`)).text)).toEqual(visible.slice(3, 6));
    const none = await ndjson('type=NoSuchEvent');
    expect(none.status).toBe(200);
    expect(none.text).toBe('');
  });
});

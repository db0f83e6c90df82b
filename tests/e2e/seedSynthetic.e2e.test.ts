import { createHash } from 'node:crypto';
import { SEED_CATALOGUE } from '#services/command-api/seedCatalogue';
import { REGIONS } from '#services/command-api/seedSynthetic/syntheticBrains';
import { client } from '#tests/support/httpClient';
import { embeddedServiceForFile, runOperatorScript } from '#tests/support/operatorTools';
import { waitFor } from '#tests/support/waitFor';

/**
 * `npm run seed -- --synthetic N` beside a running all-in-one on its embedded PostgreSQL (found
 * through DATA_DIR): the brains appear over HTTP, filed under the starter catalogue's real species
 * and atlases, with files that download and previews that render, and the read models equal a
 * rebuild from the events the seed appended.
 */
const ADMIN = {
  ADMIN_EMAIL: 'curator@example.org',
  ADMIN_PASSWORD: 'curator-password',
  ADMIN_USERNAME: 'curator',
};
const N = 2000;
jest.setTimeout(240_000);
const embedded = embeddedServiceForFile('seed-synthetic', ADMIN);
const api = client(() => embedded.service().url);
const seed = (count: number) =>
  runOperatorScript('services/command-api/seed.ts', { DATA_DIR: embedded.dataDir(), ...ADMIN }, [
    '--synthetic',
    String(count),
  ]);

interface Facet {
  id: number;
  name: string;
  count: number;
}

let staffToken: string;
beforeAll(async () => {
  const login = await api.post('/api/auth/login/', {
    json: { email: ADMIN.ADMIN_EMAIL, password: ADMIN.ADMIN_PASSWORD },
  });
  staffToken = login.body.token as string;
});

const total = async (query: string, token?: string): Promise<number> => {
  const res = await api.get(`/api/brains/?page_size=1&${query}`, { token });
  expect(res.status).toBe(200);
  return res.body.count as number;
};

test('refuses a count that is not a positive number, writing nothing', async () => {
  for (const bad of ['0', 'many']) {
    const run = await seed(bad as unknown as number);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--synthetic takes a number of brains');
  }
  expect(await total('', staffToken)).toBe(0);
});

test(`writes ${N} brains the running service lists, searches and facets`, async () => {
  const run = await seed(N);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  expect(run.stdout).toMatch(
    new RegExp(`^seed --synthetic: ${N} brains \\(ids 1\\.\\.${N}\\), \\d+ events in `),
  );
  // Progress on stderr: count, rate, ETA; the last line is the total.
  expect(run.stderr).toMatch(
    new RegExp(`seed: ${N.toLocaleString('en')} / ${N.toLocaleString('en')} brains, [\\d,]+/s\\n`),
  );

  // The running projector sees them (staff see every brain, private ones included).
  await waitFor('the seeded brains in the list', () => total('', staffToken), {
    until: (count) => count === N,
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  const anonymous = await total('');
  expect(anonymous).toBeLessThan(N); // a few are private
  expect(anonymous).toBeGreaterThan(N * 0.9);

  // Real species and atlases, and every one of them used; categories only the starter ones.
  const faceted = await api.get('/api/brains/?page_size=5&facets=species,atlas,category,verified', {
    token: staffToken,
  });
  expect(faceted.status).toBe(200);
  const facets = faceted.body.facets as Record<'species' | 'atlas' | 'category', Facet[]> & {
    verified: { value: boolean; count: number }[];
  };
  const speciesNames = SEED_CATALOGUE.species.map((s) => s.name);
  expect(facets.species.map((f) => f.name).sort()).toEqual([...speciesNames].sort());
  expect(facets.atlas.map((f) => f.name).sort()).toEqual(SEED_CATALOGUE.atlases.map((a) => a.name).sort());
  expect(facets.category.map((f) => f.name).sort()).toEqual(
    SEED_CATALOGUE.categories.map((c) => c.name).sort(),
  );
  expect(facets.category.reduce((sum, f) => sum + f.count, 0)).toBe(N);
  const underAtlas = facets.atlas.reduce((sum, f) => sum + f.count, 0);
  expect(underAtlas / N).toBeGreaterThan(0.7); // four in five under an atlas
  expect(underAtlas / N).toBeLessThan(0.9);
  const verified = facets.verified.find((v) => v.value)?.count ?? 0;
  expect(verified / N).toBeGreaterThan(0.2); // three in ten verified
  expect(verified / N).toBeLessThan(0.4);

  // A species filter agrees with its facet count.
  const mouse = facets.species.find((f) => f.name === 'house mouse')!;
  expect(await total(`species=${encodeURIComponent('Mus musculus')}`, staffToken)).toBe(mouse.count);

  // Search: names are made of anatomical terms; every hit names the word.
  const hits = await api.get(`/api/brains/?search=${REGIONS[0]}&page_size=100`, { token: staffToken });
  expect(hits.status).toBe(200);
  expect(hits.body.count).toBeGreaterThan(N / REGIONS.length / 2);
  for (const brain of hits.body.results as { name: string }[])
    expect(`${brain.name}`.toLowerCase()).toContain(REGIONS[0]);
});

test('each brain has its own processed tiny NIfTI: downloadable, previewed, deleted alone', async () => {
  const page = await api.get('/api/brains/?page_size=3&ordering=id', { token: staffToken });
  const [first, second] = page.body.results as {
    id: number;
    image: string;
    metadata: { format: string };
    preview_url: string | null;
  }[];
  for (const brain of [first!, second!]) {
    expect(brain.metadata.format).toBe('nifti');
    expect(brain.preview_url).not.toBeNull();
  }
  const download = async (id: number) => {
    const res = await fetch(`${embedded.service().url}/api/brains/${id}/file/`, {
      headers: { Authorization: `Token ${staffToken}` },
    });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const file = await download(first!.id);
  expect(file.status).toBe(200);
  expect(file.bytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])); // gzip
  const preview = await fetch(`${embedded.service().url}/api/brains/${first!.id}/preview/`, {
    headers: { Authorization: `Token ${staffToken}` },
  });
  expect(preview.status).toBe(200);
  expect(preview.headers.get('content-type')).toContain('image/png');

  // Deleting one brain deletes its file and leaves the others' (same content) in place.
  const secondBytes = (await download(second!.id)).bytes;
  expect((await api.delete(`/api/brains/${first!.id}/`, { token: staffToken })).status).toBe(204);
  const again = await download(second!.id);
  expect(again.status).toBe(200);
  expect(createHash('sha256').update(again.bytes).digest('hex')).toBe(
    createHash('sha256').update(secondBytes).digest('hex'),
  );
});

test('a second run adds more brains with the next ids; the read models equal a rebuild', async () => {
  const run = await seed(100);
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(new RegExp(`ids ${N + 1}\\.\\.${N + 100}\\)`));
  await waitFor('the second run in the list', () => total('', staffToken), {
    until: (count) => count === N - 1 + 100,
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  // No upload is left for the processor: every seeded one is already completed.
  const verify = await runOperatorScript('services/projector/verifyProjections.ts', {
    DATA_DIR: embedded.dataDir(),
  });
  expect({ code: verify.code, stdout: verify.stdout }).toEqual({
    code: 0,
    stdout: expect.stringMatching(/^verify-projections: equal to a rebuild/),
  });
});

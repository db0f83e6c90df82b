import { readFileSync } from 'node:fs';
import type { Client } from '#tests/support/httpClient';
import { waitFor } from '#tests/support/waitFor';
import { brainForm, niftiBytes } from '#tests/e2e/brains/brainFixtures';

export const NIBABEL_DATA = '/usr/lib/python3/dist-packages/nibabel/tests/data';
export const ANATOMICAL = readFileSync(`${NIBABEL_DATA}/anatomical.nii`);

export interface Catalogue {
  readonly mouse: { id: number; scientific_name: string };
  readonly rat: { id: number; scientific_name: string };
  /** The brain the tests look for: real NIfTI (nibabel's anatomical.nii, 33×41×25, 2 mm voxels). */
  readonly hippocampus: { id: number; readable_id: string; name: string };
  readonly total: number;
}

async function created(what: string, reply: Promise<{ status: number; body: any; text: string }>) {
  const { status, body, text } = await reply;
  if (status !== 201) throw new Error(`${what}: ${status} ${text}`);
  return body;
}

/**
 * A small catalogue through the API: two species of two categories, an atlas each, the real NIfTI
 * "Hippocampus sample" in the mouse atlas, 12 more mouse brains and 12 rat brains (tiny NIfTI
 * volumes; more than one page of 20), all processed before the tests start.
 */
export async function loadCatalogue(api: Client, staff: string): Promise<Catalogue> {
  const json = (body: unknown) => ({ token: staff, json: body });
  await created('category', api.post('/api/categories/', json({ name: 'mammals' })));
  await created('category', api.post('/api/categories/', json({ name: 'rodent models' })));
  const mouse = await created(
    'species',
    api.post(
      '/api/species/',
      json({ name: 'house mouse', scientific_name: 'Mus musculus', description: '', category: 'mammals' }),
    ),
  );
  const rat = await created(
    'species',
    api.post(
      '/api/species/',
      json({
        name: 'brown rat',
        scientific_name: 'Rattus norvegicus',
        description: '',
        category: 'rodent models',
      }),
    ),
  );
  const mouseAtlas = await created(
    'atlas',
    api.post('/api/atlases/', json({ name: 'Allen Mouse CCF', species: mouse.id, description: 'x' })),
  );
  const ratAtlas = await created(
    'atlas',
    api.post('/api/atlases/', json({ name: 'Waxholm Rat', species: rat.id, description: 'x' })),
  );
  const brain = (fields: Record<string, string | number>, name: string, bytes: Buffer) =>
    created('brain', api.post('/api/brains/', { token: staff, body: brainForm(fields, { name, bytes }) }));
  for (let i = 1; i <= 12; i++) {
    await brain({ name: `Mouse cortex ${i}`, atlas: mouseAtlas.id }, `mouse${i}.nii`, niftiBytes());
    await brain(
      { name: `Rat striatum ${i}`, atlas: ratAtlas.id, description: 'tiny' },
      `rat${i}.nii`,
      niftiBytes(),
    );
  }
  const hippocampus = await brain(
    {
      name: 'Hippocampus sample',
      atlas: mouseAtlas.id,
      description: 'nibabel anatomical.nii',
      website: 'https://nipy.org/nibabel/',
    },
    'anatomical.nii',
    ANATOMICAL,
  );
  await waitFor(
    'every upload processed',
    async () =>
      (await api.get('/api/file-uploads/?status=completed&page_size=1', { token: staff })).body.count,
    { until: (count) => count === 25, timeoutMs: 60_000, intervalMs: 200 },
  );
  return { mouse, rat, hippocampus, total: 25 };
}

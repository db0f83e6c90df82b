import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { testServiceForFile } from '#tests/support/testService';
import { newUser } from '#tests/support/httpClient';
import { waitFor } from '#tests/support/waitFor';
import { type Taxonomy, brainForm, createTaxonomy, nifti } from '#tests/e2e/brains/brainFixtures';
import { ensureWebBuilt, launchBrowser, screenshots, seriousA11yViolations, watchPage } from './browser';

const STAFF = { email: 'curator@example.org', password: 'curator-password-1', username: 'curator' };
/** The page's tus client sends this many bytes per PATCH (web/src/tusUpload.ts). */
const CHUNK = 5 * 1024 * 1024;
// Uploads of 12 MB through a browser on a shared, busy machine.
jest.setTimeout(180_000);

beforeAll(() => {
  ensureWebBuilt();
}, 120_000);
const { api, service } = testServiceForFile({
  ADMIN_EMAIL: STAFF.email,
  ADMIN_PASSWORD: STAFF.password,
  ADMIN_USERNAME: STAFF.username,
});

let browser: Browser;
let taxonomy: Taxonomy & { atlas: { name: string } };
let context: BrowserContext;
let page: Page;
let problems: () => string[];
let user: Awaited<ReturnType<typeof newUser>>;
const files = mkdtempSync(path.join(tmpdir(), 'web-contribute-'));

beforeAll(async () => {
  const login = await api.post('/api/auth/login/', {
    json: { email: STAFF.email, password: STAFF.password },
  });
  [browser, taxonomy] = await Promise.all([
    launchBrowser(),
    createTaxonomy(api, login.body.token) as Promise<Taxonomy & { atlas: { name: string } }>,
  ]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  user = await newUser(api);
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  problems = watchPage(page);
});
afterEach(async () => {
  await context.close();
  expect(problems()).toEqual([]);
});

const url = (p: string) => service().url + p;

async function signIn(): Promise<void> {
  await page.goto(url('/signin'));
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The cube's side for about this many MB: a multiple of 4 (the bright cube is its middle half). */
const sideOf = (megabytes: number) => 4 * Math.round(Math.cbrt(megabytes * 1024 * 1024) / 4);

/**
 * A real NIfTI-1 of about `megabytes` MB (uint8, a bright cube in the middle), written to a file so
 * the browser sees the same name, size and modification time each time it is chosen (the tus
 * fingerprint a resume is found by).
 */
function bigNifti(name: string, megabytes: number): string {
  const side = sideOf(megabytes);
  const header = Buffer.alloc(352);
  header.writeInt32LE(348, 0);
  [3, side, side, side, 1, 1, 1, 1].forEach((d, i) => header.writeInt16LE(d, 40 + 2 * i));
  header.writeInt16LE(2, 70);
  header.writeInt16LE(8, 72);
  [1, 1, 1, 1].forEach((p, i) => header.writeFloatLE(p, 76 + 4 * i));
  header.writeFloatLE(352, 108);
  header.write('n+1\0', 344, 'latin1');
  const voxels = Buffer.alloc(side ** 3);
  for (let z = side / 4; z < (3 * side) / 4; z++)
    for (let y = side / 4; y < (3 * side) / 4; y++)
      voxels.fill(
        200 + (z % 50),
        z * side * side + y * side + side / 4,
        z * side * side + y * side + (3 * side) / 4,
      );
  const file = path.join(files, name);
  writeFileSync(file, Buffer.concat([header, voxels]));
  return file;
}

/** Records each tus PATCH's Upload-Offset; holds the PATCHes whose offset `hold` picks until released. */
async function watchPatches(hold: (offset: number) => boolean) {
  const offsets: number[] = [];
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const handler = async (route: Route) => {
    const request = route.request();
    if (request.method() !== 'PATCH') return route.continue();
    const offset = Number(request.headers()['upload-offset']);
    offsets.push(offset);
    if (hold(offset)) {
      held = true;
      await released;
    }
    // A request the page gave up on meanwhile (a pause, a reload) cannot go on: nothing to do.
    await route.continue().catch(() => undefined);
  };
  await page.route(/\/api\/file-uploads\/tus\//, handler);
  return {
    offsets,
    isHeld: () => held,
    release,
    stop: () => page.unroute(/\/api\/file-uploads\/tus\//, handler),
  };
}

const progress = () => page.getByRole('progressbar', { name: 'Upload progress' });
const percent = async () => Number(await progress().getAttribute('aria-valuenow'));

async function fillAddForm(name: string): Promise<void> {
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Atlas').fill(taxonomy.atlas.name);
}

test('upload over tus from the page: progress, pause, resume, then the new brain', async () => {
  const file = bigNifti('paused.nii', 12);
  await signIn();
  await page.goto(url('/add'));
  await fillAddForm('Paused and resumed');
  await page.getByLabel('Scan file').setInputFiles(file);
  const patches = await watchPatches((offset) => offset === CHUNK);
  await page.getByRole('button', { name: 'Upload' }).click();
  // The first chunk is in, the second held: the bar shows the part sent.
  await waitFor('the second chunk to be held', () => patches.isHeld(), { timeoutMs: 30_000 });
  await waitFor('the bar to show the first chunk', async () => (await percent()) >= 40, {
    timeoutMs: 10_000,
  });
  expect(await page.getByText(/ MB\/s/).count()).toBe(1);
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByText('Paused. What was sent is kept.').waitFor();
  patches.release();
  await patches.stop();
  // While paused nothing more is sent.
  const before = await percent();
  await page.waitForTimeout(300);
  expect(await percent()).toBe(before);
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'add-paused');
  const resumed = await watchPatches(() => false);
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.getByRole('heading', { level: 1, name: 'Paused and resumed' }).waitFor({ timeout: 60_000 });
  // Resumed where the service had it: the first chunk was not sent again.
  expect(resumed.offsets[0]).toBe(CHUNK);
  expect(resumed.offsets).not.toContain(0);
  const readableId = page.url().split('/brains/')[1]!;
  const brain = await api.get(`/api/brains/${readableId}/`, { token: user.token });
  expect(brain.status).toBe(200);
  const uploads = await api.get(`/api/file-uploads/?associated_brain=${brain.body.id}`, {
    token: user.token,
  });
  expect(uploads.body).toHaveLength(1);
  expect(uploads.body[0].filename).toBe('paused.nii');
  const status = page.getByRole('status').filter({ hasText: 'Upload status' });
  await waitFor(
    'the upload to be processed',
    async () => (await status.textContent()) === 'Upload status: completed',
    { timeoutMs: 60_000 },
  );
  // The tus client forgets an upload once it is done.
  expect(await page.evaluate('Object.keys(localStorage).filter((k) => k.startsWith("tus::")).length')).toBe(
    0,
  );
});

test('an upload cut by a reload resumes from where it stopped when the same file is chosen again', async () => {
  const file = bigNifti('reloaded.nii', 12);
  await signIn();
  await page.goto(url('/add'));
  await fillAddForm('Resumed after a reload');
  await page.getByLabel('Scan file').setInputFiles(file);
  const patches = await watchPatches((offset) => offset === CHUNK);
  await page.getByRole('button', { name: 'Upload' }).click();
  await waitFor('the second chunk to be held', () => patches.isHeld(), { timeoutMs: 30_000 });
  await page.reload();
  patches.release();
  await patches.stop();
  // The page remembers the unfinished upload (tus fingerprint in localStorage) and says so.
  await page.getByText(/An upload of reloaded\.nii \(\d+\.\d MB\) did not finish/).waitFor();
  const after = await watchPatches(() => false);
  await fillAddForm('Resumed after a reload');
  await page.getByLabel('Scan file').setInputFiles(file);
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.getByRole('heading', { level: 1, name: 'Resumed after a reload' }).waitFor({ timeout: 60_000 });
  expect(after.offsets[0]).toBe(CHUNK);
  expect(after.offsets).not.toContain(0);
  const readableId = page.url().split('/brains/')[1]!;
  const brain = await api.get(`/api/brains/${readableId}/?shape=b`, { token: user.token });
  const uploads = await api.get(`/api/file-uploads/?associated_brain=${brain.body.id}`, {
    token: user.token,
  });
  expect(uploads.body.map((u: any) => u.filename)).toEqual(['reloaded.nii']);
  // The bytes the service stored are the file's, whole.
  const download = await fetch(new URL(brain.body.s3_url, service().url), {
    headers: { Authorization: `Token ${user.token}` },
  });
  expect(download.status).toBe(200);
  expect(Number(download.headers.get('content-length'))).toBe(352 + sideOf(12) ** 3);
});

test('edit a brain in its page: saved with If-Match, field errors inline, a change meanwhile is refused and said', async () => {
  const created = await api.post('/api/brains/', {
    token: user.token,
    body: brainForm({ name: 'Before the edit', atlas: taxonomy.atlas.id, description: 'old' }, nifti()),
  });
  expect(created.status).toBe(201);
  const readableId = created.body.readable_id as string;
  await signIn();
  await page.goto(url(`/brains/${readableId}`));
  await page.getByRole('button', { name: 'Edit' }).click();
  const form = page.getByRole('form', { name: 'Edit brain' });
  await form.getByLabel('Name').fill('After the edit');
  await form.getByLabel('Description').fill('changed in the page');
  await form.getByLabel('Website').fill('ftp://example.org/not-http');
  await form.getByRole('button', { name: 'Save' }).click();
  // The API's message about the website, next to it; nothing saved.
  await page.locator('#edit-website-error').waitFor();
  expect(await page.getByLabel('Website').getAttribute('aria-describedby')).toBe('edit-website-error');
  expect((await api.get(`/api/brains/${readableId}/`)).body.name).toBe('Before the edit');
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'edit');
  await form.getByLabel('Website').fill('https://example.org/lab');
  await form.getByRole('button', { name: 'Save' }).click();
  // Saved: the page shows the new name (and no error the form would have shown instead).
  await page
    .getByRole('heading', { level: 1, name: 'After the edit' })
    .or(form.locator('.field-error, [role="alert"]'))
    .first()
    .waitFor();
  expect(await form.locator('.field-error, [role="alert"]').allTextContents()).toEqual([]);
  await page.getByRole('heading', { level: 1, name: 'After the edit' }).waitFor();
  expect(await page.locator('.description').textContent()).toBe('changed in the page');
  const saved = await api.get(`/api/brains/${created.body.id}/`);
  expect(saved.body).toMatchObject({ name: 'After the edit', website: 'https://example.org/lab' });
  expect(saved.body.atlas).toBe(taxonomy.atlas.id);

  // Someone changes it while the form is open: the save is refused and nothing is overwritten.
  await page.getByRole('button', { name: 'Edit' }).click();
  await waitFor('the form to have read the brain', () =>
    form.getByRole('button', { name: 'Save' }).isEnabled(),
  );
  const meanwhile = await api.patch(`/api/brains/${created.body.id}/`, {
    token: user.token,
    json: { description: 'changed meanwhile elsewhere' },
  });
  expect(meanwhile.status).toBe(200);
  await form.getByLabel('Name').fill('Lost update');
  await form.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('alert').filter({ hasText: 'changed meanwhile' }).waitFor();
  const after = await api.get(`/api/brains/${created.body.id}/?shape=a`);
  expect(after.body).toMatchObject({ name: 'After the edit', description: 'changed meanwhile elsewhere' });
  // Loading the current version shows the other change, ready to edit again.
  await page.getByRole('button', { name: 'Load the current version' }).click();
  await waitFor(
    'the form to show the current description',
    async () => (await page.getByLabel('Description').inputValue()) === 'changed meanwhile elsewhere',
    { timeoutMs: 10_000 },
  );
});

test('others see no Edit on a brain that is not theirs', async () => {
  const other = await newUser(api);
  const created = await api.post('/api/brains/', {
    token: other.token,
    body: brainForm({ name: 'Not yours to edit', atlas: taxonomy.atlas.id }, nifti()),
  });
  expect(created.status).toBe(201);
  await signIn();
  await page.goto(url(`/brains/${created.body.readable_id}`));
  await page.getByRole('heading', { level: 1, name: 'Not yours to edit' }).waitFor();
  expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
});

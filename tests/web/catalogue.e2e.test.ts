import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { testServiceForFile } from '#tests/support/testService';
import { newUser } from '#tests/support/httpClient';
import { waitFor } from '#tests/support/waitFor';
import {
  ARTIFACTS,
  drawnPixels,
  ensureWebBuilt,
  launchBrowser,
  screenshots,
  seriousA11yViolations,
  watchPage,
} from './browser';
import { brainForm } from '#tests/e2e/brains/brainFixtures';
import { ANATOMICAL, type Catalogue, loadCatalogue } from './catalogueData';

const STAFF = { email: 'curator@example.org', password: 'curator-password-1', username: 'curator' };
let listPageJs: ReturnType<typeof ensureWebBuilt>['listPageJs'];
beforeAll(() => {
  // Before the service starts: it serves what dist/web holds then.
  listPageJs = ensureWebBuilt().listPageJs;
}, 120_000);
const { api, service } = testServiceForFile({
  ADMIN_EMAIL: STAFF.email,
  ADMIN_PASSWORD: STAFF.password,
  ADMIN_USERNAME: STAFF.username,
});

let browser: Browser;
let catalogue: Catalogue;
let context: BrowserContext;
let page: Page;
let problems: () => string[];
const figures: Record<string, number> = {};

beforeAll(async () => {
  const login = await api.post('/api/auth/login/', {
    json: { email: STAFF.email, password: STAFF.password },
  });
  [browser, catalogue] = await Promise.all([launchBrowser(), loadCatalogue(api, login.body.token)]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(
    path.join(ARTIFACTS, 'figures.json'),
    `${JSON.stringify({ ...figures, listPageJs }, null, 2)}\n`,
  );
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  problems = watchPage(page);
});
afterEach(async () => {
  await context.close();
  expect(problems()).toEqual([]);
});

const url = (p: string) => service().url + p;
const results = () => page.locator('.cards li h2 a');
/** Waits until `check` passes (its expect()s hold). */
const eventually = (what: string, check: () => Promise<void>, timeoutMs = 10_000) =>
  waitFor(
    what,
    async () => {
      await check();
      return true;
    },
    { timeoutMs },
  );
/** The list's count line ("25 brains") shows this text (eventually: answers arrive after input). */
const showsCount = (text: string) =>
  eventually(`the count "${text}"`, async () =>
    expect(await page.locator('.count').textContent()).toBe(text),
  );

test('the list page is newest first, ships little JavaScript, has no serious accessibility violation', async () => {
  const started = Date.now();
  await page.goto(url('/'));
  await results().first().waitFor();
  figures.timeToFirstResultMs = Date.now() - started;
  // From the navigation's start to the results on screen, by the page's own clock.
  // (taken after the frame that painted them: it may come a frame after the DOM shows them)
  const mark = await page.waitForFunction(
    () => (globalThis as any).performance.getEntriesByName('catalogue:first-result')[0]?.startTime,
  );
  figures.firstResultMarkMs = Math.round((await mark.jsonValue()) as number);
  expect(await page.evaluate('document.documentElement.lang')).toBe('en');
  const newest = await api.get('/api/brains/?page_size=20');
  expect(await results().allTextContents()).toEqual(newest.body.results.map((b: any) => b.name));
  await showsCount(`${catalogue.total} brains`);
  expect(listPageJs.gzip).toBeLessThan(200 * 1024);
  // The viewer is not part of it: no NiiVue code was fetched for the list.
  const scripts = await page.evaluate<string[]>(
    'performance.getEntriesByType("resource").map((e) => e.name).filter((n) => n.endsWith(".js"))',
  );
  expect(scripts.some((s) => /viewer-/.test(s))).toBe(false);
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'list');
});

test('a search with a typo finds the brain, and a slow older answer never replaces a newer one', async () => {
  await page.goto(url('/'));
  await results().first().waitFor();
  // The answer to "Rat" is held back until after the answer to the typo has been shown.
  let releaseRat: () => void = () => undefined;
  const ratHeld = new Promise<void>((resolve) => (releaseRat = resolve));
  await page.route(/\/api\/brains\/\?.*search=Rat(&|$)/, async (route) => {
    await ratHeld;
    await route.continue();
  });
  const search = page.getByRole('searchbox', { name: 'Search brains' });
  await search.pressSequentially('Rat');
  await page.waitForURL(/q=Rat/, { waitUntil: 'commit' });
  await search.fill('');
  await search.pressSequentially('hipocampus');
  await page.waitForURL(/q=hipocampus/, { waitUntil: 'commit' });
  await showsCount('1 brain matching “hipocampus”');
  releaseRat();
  // Time for the held answer to arrive and (wrongly) render, then the view must still be the typo's.
  await page.waitForTimeout(500);
  expect(await results().allTextContents()).toEqual(['Hippocampus sample']);
  await showsCount('1 brain matching “hipocampus”');
});

test('a facet narrows the list to the count the API gives, and the URL restores the view on reload and back', async () => {
  await page.goto(url('/'));
  const species = page.getByRole('group', { name: 'Species' });
  const rat = species.getByRole('checkbox', { name: /^brown rat \(12\)$/ });
  await rat.check();
  await page.waitForURL(new RegExp(`species=${catalogue.rat.id}`));
  const fromApi = await api.get(
    `/api/brains/?species=${encodeURIComponent(catalogue.rat.scientific_name)}&page_size=20`,
  );
  expect(fromApi.body.count).toBe(12);
  await showsCount('12 brains');
  expect(await results().allTextContents()).toEqual(fromApi.body.results.map((b: any) => b.name));
  for (const group of ['Species', 'Atlas', 'Category', 'Verified'])
    await page.getByRole('group', { name: group }).waitFor();
  // A second facet, then page 1 → the whole filtered view is in the URL.
  await page
    .getByRole('group', { name: 'Verified' })
    .getByRole('checkbox', { name: 'not verified (12)' })
    .check();
  await page.waitForURL(/verified=false/);
  const filteredUrl = page.url();
  await page.reload();
  await showsCount('12 brains');
  expect(
    await page
      .getByRole('group', { name: 'Species' })
      .getByRole('checkbox', { name: /brown rat/ })
      .isChecked(),
  ).toBe(true);
  await page.goBack();
  await page.waitForURL((u) => !u.search.includes('verified'));
  await showsCount('12 brains');
  await page.goBack();
  await showsCount(`${catalogue.total} brains`);
  expect(
    await page
      .getByRole('group', { name: 'Species' })
      .getByRole('checkbox', { name: /brown rat/ })
      .isChecked(),
  ).toBe(false);
  await page.goForward();
  await page.goForward();
  expect(page.url()).toBe(filteredUrl);
  await showsCount('12 brains');
});

test('search as you type: a burst of keys asks at its first key and once more for the whole text, not once per key', async () => {
  // The page's clock is the test's: keys typed with no time passing are one burst, whatever the
  // machine's load (no timing is asserted).
  await page.clock.install();
  await page.goto(url('/'));
  await results().first().waitFor();
  const searches: string[] = [];
  page.on('request', (request) => {
    const u = new URL(request.url());
    if (u.pathname === '/api/brains/' && u.searchParams.has('search'))
      searches.push(u.searchParams.get('search')!);
  });
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 60_000);
  const search = page.getByRole('searchbox', { name: 'Search brains' });
  await search.pressSequentially('hipocampus');
  await page.clock.runFor(20);
  // The first key after a pause asks at once (debounce's leading edge)…
  expect(searches).toEqual(['h']);
  // …and the burst is asked once more when it ends, for the whole text (trailing edge).
  await page.clock.runFor(1000);
  expect(searches).toEqual(['h', 'hipocampus']);
  await page.clock.resume();
  await showsCount('1 brain matching “hipocampus”');
  expect(await results().allTextContents()).toEqual(['Hippocampus sample']);
  // One key after a pause asks at once, and nothing more after it. (A minute ahead of the page's
  // clock, not the test's: the first pause and runFor left the page's about a minute ahead.)
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 60_000);
  await search.press('Backspace');
  await page.clock.runFor(20);
  expect(searches).toEqual(['h', 'hipocampus', 'hipocampu']);
  await page.clock.runFor(1000);
  expect(searches).toEqual(['h', 'hipocampus', 'hipocampu']);
  await page.clock.resume();
});

test('at 390 px: the facets are behind a button, nothing scrolls sideways, and they still filter', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(url('/'));
  await results().first().waitFor();
  const toggle = page.getByRole('button', { name: 'Filters' });
  const species = page.getByRole('group', { name: 'Species' });
  expect(await toggle.getAttribute('aria-expanded')).toBe('false');
  expect(await species.isVisible()).toBe(false);
  const overflow = () =>
    page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(await overflow()).toBe(0);
  expect(await seriousA11yViolations(page)).toEqual([]);
  await toggle.click();
  expect(await toggle.getAttribute('aria-expanded')).toBe('true');
  await species.getByRole('checkbox', { name: /^brown rat \(12\)$/ }).check();
  await showsCount('12 brains');
  expect(await overflow()).toBe(0);
  expect(await page.getByRole('button', { name: /Hide filters \(1 on\)/ }).isVisible()).toBe(true);
  expect(await seriousA11yViolations(page)).toEqual([]);
  await page.screenshot({ path: `${ARTIFACTS}/list-filters-open-390.png`, fullPage: true });
  // The brain page, too, fits the width.
  await page.goto(url(`/brains/${catalogue.hippocampus.readable_id}`));
  await page.getByRole('heading', { level: 1, name: 'Hippocampus sample' }).waitFor();
  await page.locator('[data-viewer-state="ready"]').waitFor({ timeout: 30_000 });
  expect(await overflow()).toBe(0);
  // Wide again: the facets are there without the button.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(url('/'));
  await species.waitFor();
  expect(await page.getByRole('button', { name: 'Filters' }).isVisible()).toBe(false);
});

test('pages: page 2 in the URL, and back to page 1', async () => {
  await page.goto(url('/'));
  await results().first().waitFor();
  await page.getByRole('link', { name: 'Next' }).click();
  await page.waitForURL(/page=2/);
  const second = await api.get('/api/brains/?page=2&page_size=20');
  await eventually('page 2 shown', async () =>
    expect(await results().allTextContents()).toEqual(second.body.results.map((b: any) => b.name)),
  );
  await page.goBack();
  await eventually('page 1 shown', async () => expect(await results().count()).toBe(20));
});

test('the brain page shows the fields, the preview, the metadata as a table and the volume in the viewer', async () => {
  await page.goto(url(`/brains/${catalogue.hippocampus.readable_id}`));
  await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Hippocampus sample');
  const fields = page.locator('dl.fields');
  await expect(fields.textContent()).resolves.toMatch(
    /AtlasAllen Mouse CCF.*Specieshouse mouse \(Mus musculus\).*Categorymammals.*Uploadercurator/,
  );
  const preview = page.getByRole('img', { name: 'Preview of Hippocampus sample' });
  await waitFor(
    'preview decoded',
    async () => await preview.evaluate((img: any) => img.naturalWidth as number),
  );
  // A 33×41×25 volume: its three slices scaled up so the short side is at least 256 px.
  const size = await preview.evaluate((img: any) => [img.naturalWidth, img.naturalHeight] as number[]);
  expect(Math.min(...size)).toBeGreaterThanOrEqual(256);
  const table = page.getByRole('table', { name: 'Scan metadata' });
  await expect(table.getByRole('row', { name: /Shape/ }).textContent()).resolves.toBe('Shape33 × 41 × 25');
  await expect(table.getByRole('row', { name: /Voxel size/ }).textContent()).resolves.toBe(
    'Voxel size2 mm × 2 mm × 2 mm',
  );
  await expect(table.getByRole('row', { name: /Data type/ }).textContent()).resolves.toBe('Data typeint16');
  await expect(table.getByRole('row', { name: /Orientation/ }).textContent()).resolves.toBe(
    'OrientationLAS+',
  );
  await expect(page.getByRole('status').filter({ hasText: 'Upload status' }).textContent()).resolves.toBe(
    'Upload status: completed',
  );
  const download = page.getByRole('link', { name: 'Download' });
  const file = await api.get((await download.getAttribute('href'))!);
  expect(file.status).toBe(200);
  await page.locator('[data-viewer-state="ready"]').waitFor({ timeout: 30_000 });
  const canvas = page.getByRole('img', { name: 'Volume viewer' });
  const { drawn, total } = drawnPixels(await canvas.screenshot());
  figures.viewerDrawnPixelShare = Math.round((drawn / total) * 1000) / 1000;
  expect(drawn / total).toBeGreaterThan(0.1);
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'brain');
});

test('the upload status updates by itself until processing ends', async () => {
  // The page first sees the brain as it is while processing (no metadata, no preview); the service
  // says the rest when the page asks again, without a reload.
  let first = true;
  await page.route(/\/api\/brains\/hippocampus-sample-[^/?]+\/$/, async (route) => {
    if (!first) return route.continue();
    first = false;
    const response = await route.fetch();
    const body = { ...(await response.json()), metadata: {}, preview_url: null };
    await route.fulfill({ response, json: body });
  });
  await page.goto(url(`/brains/${catalogue.hippocampus.readable_id}`));
  const status = page.getByRole('status').filter({ hasText: 'Upload status' });
  await expect(status.textContent()).resolves.toBe('Upload status: processing');
  await eventually('completed without a reload', async () =>
    expect(await status.textContent()).toBe('Upload status: completed'),
  );
  await page.getByRole('img', { name: 'Preview of Hippocampus sample' }).waitFor();
});

test('register, sign out, sign in; create a token, see its secret once, revoke it', async () => {
  await page.goto(url('/'));
  await page.getByRole('link', { name: 'Register' }).click();
  const email = `web${Date.now()}@example.org`;
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Username').fill(`web${Date.now()}`);
  await page.getByLabel('First name').fill('Camillo');
  await page.getByLabel('Last name').fill('Golgi');
  await page.getByLabel('Password', { exact: true }).fill('short');
  await page.getByLabel('Confirm password').fill('short');
  await page.getByRole('button', { name: 'Register' }).click();
  // The API's message about the password is shown next to that field.
  await page.locator('#register-password-error').waitFor();
  expect(await seriousA11yViolations(page)).toEqual([]);
  await page.getByLabel('Password', { exact: true }).fill('a-long-enough-password');
  await page.getByLabel('Confirm password').fill('a-long-enough-password');
  await page.getByRole('button', { name: 'Register' }).click();
  await page.getByRole('heading', { name: 'Profile', level: 1 }).waitFor();
  expect(await page.evaluate('document.cookie')).toBe('');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('wrong-password-123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'signin');
  await page.getByLabel('Password').fill('a-long-enough-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  await page.getByRole('link', { name: 'Tokens' }).click();
  await page.getByLabel('Token name').fill('laptop');
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = (await page.getByTestId('token-secret').textContent())!;
  expect(secret).toMatch(/^bic_pat_/);
  expect((await api.get('/api/auth/me/', { token: secret })).status).toBe(200);
  await page
    .getByRole('row', { name: /laptop/ })
    .getByRole('button', { name: 'Revoke laptop' })
    .waitFor();
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'tokens');
  await page.getByRole('button', { name: 'Revoke laptop' }).click();
  await page.getByRole('status').filter({ hasText: 'Token “laptop” revoked' }).waitFor();
  expect(await page.getByRole('row', { name: /laptop/ }).count()).toBe(0);
  expect((await api.get('/api/auth/me/', { token: secret })).status).toBe(401);
  // The secret is never shown again.
  await page.reload();
  await page.getByText('No tokens yet.').waitFor();
  expect(await page.getByTestId('token-secret').count()).toBe(0);
  await page.getByRole('link', { name: /^web\d+$/ }).click();
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'profile');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('link', { name: 'Sign in' }).waitFor();
});

test('keyboard only: the search box, a result, the viewer', async () => {
  await page.goto(url('/'));
  await results().first().waitFor();
  const focused = () =>
    page.evaluate(
      'document.activeElement && (document.activeElement.getAttribute("aria-label") || document.activeElement.textContent)',
    );
  const tabTo = async (name: string, most: number) => {
    for (let i = 0; i < most; i++) {
      await page.keyboard.press('Tab');
      if ((await focused()) === name) return i + 1;
    }
    throw new Error(`${name} not reached in ${most} tabs (at "${String(await focused())}")`);
  };
  figures.tabsToSearch = await tabTo('Search brains', 10);
  await page.keyboard.type('Hippocampus');
  await page.getByRole('link', { name: 'Hippocampus sample', exact: true }).waitFor();
  await eventually('one result', async () => expect(await results().count()).toBe(1));
  figures.tabsToResult = await tabTo('Hippocampus sample', 30);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Hippocampus sample' }).waitFor();
  await page.locator('[data-viewer-state="ready"]').waitFor({ timeout: 30_000 });
  figures.tabsToViewer = await tabTo('Volume viewer', 40);
});

test('the server: page paths get the shell with its CSP, assets are immutable and compressed, the API is unchanged', async () => {
  const shell = await fetch(url('/brains/anything'));
  expect(shell.status).toBe(200);
  expect(shell.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = shell.headers.get('content-security-policy')!;
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  const html = await shell.text();
  expect(html).toContain('<html lang="en">');
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  const script = /<script type="module" src="([^"]+)"/.exec(html)![1]!;
  const br = await fetch(url(script), { headers: { 'Accept-Encoding': 'br' } });
  expect(br.status).toBe(200);
  expect(br.headers.get('content-encoding')).toBe('br');
  expect(br.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  expect((await br.text()).length).toBeGreaterThan(1000); // fetch decodes it
  const plain = await fetch(url(script), { headers: { 'Accept-Encoding': 'identity' } });
  expect(plain.headers.get('content-encoding')).toBeNull();
  const missing = await fetch(url('/assets/app-NOPE.js'));
  expect(missing.status).toBe(404);
  expect(await missing.json()).toEqual({ detail: 'Not found.' });
  // A browser at an address that is no page gets the shell (which says so) with a 404; the API's
  // own 404s stay JSON whatever the client accepts.
  const unknownPage = await fetch(url('/no/such/page'), { headers: { Accept: 'text/html' } });
  expect(unknownPage.status).toBe(404);
  expect(unknownPage.headers.get('content-type')).toContain('text/html');
  for (const path of ['/no/such/page', '/api/nope/', '/api/brains/no-such-brain/']) {
    const reply = await fetch(url(path), { headers: { Accept: 'text/html,application/json' } });
    if (path === '/no/such/page') continue;
    expect(reply.status).toBe(404);
    expect(await reply.json()).toEqual({ detail: 'Not found.' });
  }
  const json404 = await fetch(url('/no/such/page'));
  expect(json404.status).toBe(404);
  expect(await json404.json()).toEqual({ detail: 'Not found.' });
  expect((await fetch(url('/'), { method: 'POST' })).headers.get('content-type')).toContain('json');
  await page.goto(url('/no/such/page'));
  await page.getByRole('heading', { name: 'Page not found' }).waitFor();
});

test('a private brain: its page, preview and viewer load with the signed-in token', async () => {
  const owner = await newUser(api);
  const atlas = (await api.get('/api/atlases/')).body.find((a: any) => a.name === 'Allen Mouse CCF');
  const made = await api.post('/api/brains/', {
    token: owner.token,
    body: brainForm(
      { name: 'Private hippocampus', atlas: atlas.id, visibility: 'private' },
      { name: 'anatomical.nii', bytes: ANATOMICAL },
    ),
  });
  expect(made.status).toBe(201);
  await page.goto(url(`/brains/${made.body.readable_id}`));
  await page.getByRole('heading', { name: 'Brain not found' }).waitFor();
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.goto(url(`/brains/${made.body.readable_id}`));
  await page.getByRole('heading', { level: 1, name: 'Private hippocampus' }).waitFor();
  await eventually(
    'completed',
    async () =>
      expect(await page.getByRole('status').filter({ hasText: 'Upload status' }).textContent()).toBe(
        'Upload status: completed',
      ),
    30_000,
  );
  await page.locator('[data-viewer-state="ready"]').waitFor({ timeout: 30_000 });
  const preview = page.getByRole('img', { name: 'Preview of Private hippocampus' });
  await waitFor(
    'private preview decoded',
    async () => await preview.evaluate((img: any) => img.naturalWidth as number),
  );
  expect(
    drawnPixels(await page.getByRole('img', { name: 'Volume viewer' }).screenshot()).drawn,
  ).toBeGreaterThan(1000);
});

test('add a brain: a real NIfTI through the form, then its page reaches completed by itself and shows the volume', async () => {
  const user = await newUser(api);
  await page.goto(url('/signin'));
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Add brain' }).click();
  await page.getByRole('heading', { level: 1, name: 'Add brain' }).waitFor();
  // The API's own message, next to the field it concerns: no file and no name yet.
  await page.getByLabel('Scan file').setInputFiles({
    name: 'notes.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('not a scan'),
  });
  await page.getByLabel('Name').fill('Uploaded from the browser');
  await page.getByLabel('Atlas').fill('Allen Mouse CCF');
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.locator('#add-file-error').waitFor();
  expect(await seriousA11yViolations(page)).toEqual([]);
  await screenshots(page, 'add');
  await page.getByLabel('Scan file').setInputFiles({
    name: 'anatomical.nii',
    mimeType: 'application/octet-stream',
    buffer: ANATOMICAL,
  });
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.getByRole('heading', { level: 1, name: 'Uploaded from the browser' }).waitFor();
  expect(page.url()).toMatch(/\/brains\/uploaded-from-the-browser/);
  const status = page.getByRole('status').filter({ hasText: 'Upload status' });
  await eventually(
    'completed without a reload',
    async () => expect(await status.textContent()).toBe('Upload status: completed'),
    30_000,
  );
  await page.locator('[data-viewer-state="ready"]').waitFor({ timeout: 30_000 });
  await page.getByRole('img', { name: 'Preview of Uploaded from the browser' }).waitFor();
  expect(
    drawnPixels(await page.getByRole('img', { name: 'Volume viewer' }).screenshot()).drawn,
  ).toBeGreaterThan(1000);
  // Not staff: no Verify. The uploader deletes it (after saying yes).
  expect(await page.getByRole('button', { name: 'Verify' }).count()).toBe(0);
  const readableId = page.url().split('/brains/')[1]!;
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.waitForURL((u) => u.pathname === '/', { waitUntil: 'commit' });
  expect((await api.get(`/api/brains/${readableId}/`, { token: user.token })).status).toBe(404);
});

test('staff verify a brain from its page; others see no Verify', async () => {
  const rat = (await api.get('/api/brains/?search=Rat%20striatum%203&page_size=1')).body.results[0];
  expect(rat.verified).toBe(false);
  await page.goto(url('/signin'));
  await page.getByLabel('Email').fill(STAFF.email);
  await page.getByLabel('Password').fill(STAFF.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.goto(url(`/brains/${rat.readable_id}`));
  await page.getByRole('button', { name: 'Verify' }).click();
  await eventually('verified shown', async () =>
    expect(await page.locator('dl.fields').textContent()).toContain('VerifiedYes'),
  );
  expect((await api.get(`/api/brains/${rat.readable_id}/`)).body.verified).toBe(true);
  expect(await page.getByRole('button', { name: 'Verify' }).count()).toBe(0);
});

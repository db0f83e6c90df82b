import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { type Browser, type Page, chromium } from 'playwright-core';
import { PNG } from 'pngjs';

/** The checkout, from the sources (tests/web) and from the bench's build (dist/tests/web) alike. */
const ROOT = ((up) => (path.basename(up) === 'dist' ? path.dirname(up) : up))(
  path.join(__dirname, '..', '..'),
);
export const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'web');
const WEB_DIR = path.join(ROOT, 'dist', 'web');

/** The newest modification time under a folder (the web sources). */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(file) : statSync(file).mtimeMs);
  }
  return latest;
}

/**
 * Builds the catalogue into dist/web as `npm run build` does, unless the build there is newer than
 * every source (the service reads dist/web when it starts). Returns the build's manifest.
 */
export function ensureWebBuilt(): { listPageJs: { bytes: number; gzip: number; brotli: number } } {
  const manifest = path.join(WEB_DIR, 'manifest.json');
  const sources = Math.max(
    newest(path.join(ROOT, 'web')),
    statSync(path.join(ROOT, 'scripts', 'buildWeb.mjs')).mtimeMs,
  );
  let built: number;
  try {
    built = statSync(manifest).mtimeMs;
  } catch {
    built = 0;
  }
  if (built < sources)
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'buildWeb.mjs')], {
      env: { ...process.env, BUILD_WEB_QUIET: '1' },
      stdio: 'inherit',
    });
  return JSON.parse(readFileSync(manifest, 'utf8'));
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-sandbox'],
  });
}

/**
 * Problems a page reports on its own: script errors, and any Content-Security-Policy refusal (the
 * page must work under its strict policy). Read them with `problems()` at the end of a test.
 */
export function watchPage(page: Page): () => string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (
      message.type() === 'error' &&
      !/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)
    )
      problems.push(`console error: ${text}`);
    if (/Content Security Policy|Refused to/i.test(text)) problems.push(`CSP: ${text}`);
  });
  return () => problems;
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's violations of impact serious or critical on the page as it is now. axe is evaluated
 * through the DevTools protocol rather than added as a <script>: the page's CSP (rightly) refuses
 * inline scripts.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<{ id: string; impact: string; help: string; nodes: string[] }[]>(
    'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.join(', ')})`);
}

/** Full-page screenshots at a desktop (1280 px) and a phone (390 px) width, kept as test artifacts. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 900 };
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(original);
}

/** Pixels of a PNG that are not the background (black): how much a canvas really drew. */
export function drawnPixels(png: Buffer): { drawn: number; total: number } {
  const image = PNG.sync.read(png);
  let drawn = 0;
  for (let i = 0; i < image.data.length; i += 4)
    if (image.data[i]! + image.data[i + 1]! + image.data[i + 2]! > 48) drawn++;
  return { drawn, total: image.width * image.height };
}

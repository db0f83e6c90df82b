import path from 'node:path';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { allProjections } from '#services/projector/projections/allProjections';
import { ensureWebBuilt, launchBrowser } from '#tests/web/browser';
import type { BenchPostgres } from './benchPostgres';
import { startBenchService } from './benchService';
import { writeCatalogue } from './catalogueWriter';
import type { Cleanup } from './cleanup';
import { type Figure, type Unit, milliseconds } from './figure';
import { printDetail, printFigure, printSection } from './report';
import { searchVocabulary } from './searchVocabulary';
import { percentile, spread } from './stats';

/** The issue's bar: keystroke to rendered results, p95, at 100,000 brains. */
const SEARCH_P95_TARGET_MS = 150;
const LIST_PAGE_JS_TARGET = 200 * 1024;
/** Written by web/src/pages/BrowsePage.tsx (SEARCH_PAINT_MEASURE, FIRST_RESULT_MARK). */
const PAINT_MEASURE = 'catalogue:keystroke-to-paint';
const FIRST_RESULT_MARK = 'catalogue:first-result';
const kib: Unit = { suffix: 'KiB', format: (n) => (n / 1024).toFixed(1) };

export interface WebSearchPlan {
  readonly brains: number;
  readonly rounds: number;
  readonly queriesPerRound: number;
  /** Time between keys as a person types (120 ms ≈ 100 words a minute). */
  readonly keyDelayMs: number;
}

/** BENCH_BRAINS (100,000) brains; BENCH_WEB_QUERIES (20) texts typed a round. */
export function webSearchOptions(env: NodeJS.ProcessEnv): WebSearchPlan {
  const queries = Number(env.BENCH_WEB_QUERIES ?? 20);
  const brains = Number(env.BENCH_BRAINS ?? 100_000);
  return {
    brains: Number.isInteger(brains) && brains > 0 ? brains : 100_000,
    rounds: 3,
    queriesPerRound: Number.isInteger(queries) && queries > 0 ? queries : 20,
    keyDelayMs: 120,
  };
}

/**
 * The web catalogue on the real all-in-one over a generated catalogue of `brains` brains, driven in
 * headless Chromium: the list page's JavaScript (compressed bytes) and time to first result, and
 * search as you type: texts a person would type (searchVocabulary: words, prefixes, typos, species)
 * typed key by key, each measured by the page itself from the last keystroke to the frame that
 * painted its results (performance.measure). The baseline, measured in the same run: the search
 * request's own time as the browser saw it (Resource Timing), so the page's share shows apart.
 */
export async function measureWebCatalogue(
  bench: BenchPostgres,
  cleanup: Cleanup,
  plan: WebSearchPlan,
): Promise<Figure[]> {
  printSection(`web catalogue on ${plan.brains.toLocaleString('en-US')} brains, in headless Chromium`);
  const built = ensureWebBuilt();
  const databaseUrl = await bench.createDatabase('bench_web');
  await writeAndProject(databaseUrl, cleanup, plan.brains);
  const service = await startBenchService(databaseUrl, path.join(bench.scratchDir, 'web'));
  const closeService = cleanup.defer('web all-in-one', () => service.close());
  const browser = await launchBrowser();
  const closeBrowser = cleanup.defer('chromium', () => browser.close());
  const figures: Figure[] = [];

  const js: Figure = {
    name: 'list page JavaScript (gzip)',
    rounds: [built.listPageJs.gzip],
    unit: kib,
    target: { kind: 'at most', value: LIST_PAGE_JS_TARGET },
  };
  printFigure(js);
  figures.push(js);

  const firstResult: number[] = [];
  for (let round = 0; round < plan.rounds; round++) {
    // A fresh context each time: nothing cached, as for a first visit.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${service.url}/`);
    await page.locator('.cards li h2 a').first().waitFor({ timeout: 30_000 });
    // The mark is taken after the frame that painted the results: it may follow the DOM by a frame.
    const mark = await page.waitForFunction(
      (name) => (globalThis as any).performance.getEntriesByName(name)[0]?.startTime as number | undefined,
      FIRST_RESULT_MARK,
    );
    firstResult.push((await mark.jsonValue()) as number);
    await context.close();
  }
  const first: Figure = {
    name: 'list page: navigation to first result painted',
    rounds: firstResult,
    unit: milliseconds,
    target: undefined,
  };
  printFigure(first);
  figures.push(first);

  const texts = searchVocabulary(plan.brains);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${service.url}/`);
  await page.locator('.cards li h2 a').first().waitFor({ timeout: 30_000 });
  const p95s: number[] = [];
  const medians: number[] = [];
  const apiMedians: number[] = [];
  let missed = 0;
  let slowest = { text: '', ms: 0 };
  for (let round = 0; round < plan.rounds; round++) {
    const latencies: number[] = [];
    const apiTimes: number[] = [];
    for (const text of texts.slice(round * plan.queriesPerRound, (round + 1) * plan.queriesPerRound)) {
      const measured = await typeAndMeasure(page, text, plan.keyDelayMs);
      if (measured === undefined) {
        missed++;
        latencies.push(10_000);
        continue;
      }
      latencies.push(measured.paintMs);
      if (measured.apiMs !== undefined) apiTimes.push(measured.apiMs);
      if (measured.paintMs > slowest.ms) slowest = { text, ms: measured.paintMs };
    }
    p95s.push(percentile(latencies, 95));
    medians.push(spread(latencies).median);
    if (apiTimes.length > 0) apiMedians.push(spread(apiTimes).median);
  }
  await context.close();
  const p95: Figure = {
    name: `search as you type: last keystroke to results painted, p95 (${plan.queriesPerRound} texts a round, a key every ${plan.keyDelayMs} ms)`,
    rounds: p95s,
    unit: milliseconds,
    target: { kind: 'at most', value: SEARCH_P95_TARGET_MS },
  };
  const median: Figure = {
    name: 'search as you type: last keystroke to results painted, median',
    rounds: medians,
    unit: milliseconds,
    target: undefined,
  };
  const api: Figure = {
    name: 'baseline: the search request itself as the browser saw it (Resource Timing), median',
    rounds: apiMedians,
    unit: milliseconds,
    target: undefined,
  };
  for (const figure of [p95, median, api]) {
    printFigure(figure);
    figures.push(figure);
  }
  const medianOf = (values: number[]) => (values.length ? spread(values).median : NaN);
  printDetail(
    `keystroke to paint is ${(medianOf(medians) / medianOf(apiMedians)).toFixed(2)}× the request alone (median of medians; the rest is the debounce and rendering); slowest "${slowest.text}" ${slowest.ms.toFixed(0)} ms${missed ? `; ${missed} texts never painted within 10 s` : ''}`,
  );
  await closeBrowser();
  await closeService();
  return figures;
}

/**
 * Empties the search box (and waits for the unfiltered list), types `text` key by key, then waits for
 * the page's measure of that text. Undefined when its results never painted.
 */
async function typeAndMeasure(
  page: Page,
  text: string,
  keyDelayMs: number,
): Promise<{ paintMs: number; apiMs: number | undefined } | undefined> {
  const box = page.getByRole('searchbox', { name: 'Search brains' });
  if ((await box.inputValue()) !== '') {
    await box.fill('');
    await page.waitForFunction(
      () => {
        const w = globalThis as any;
        return (
          !new URLSearchParams(w.location.search).has('q') &&
          !String(w.document.querySelector('.count')?.textContent ?? '').includes('matching')
        );
      },
      undefined,
      { timeout: 10_000 },
    );
  }
  await page.evaluate(() => {
    const { performance } = globalThis as any;
    performance.clearMeasures();
    performance.clearResourceTimings();
  });
  await box.focus();
  await page.keyboard.type(text, { delay: keyDelayMs });
  const wanted = text.trim();
  try {
    // Page-side code (this file is compiled without the DOM's types; functions, not strings: the
    // page's CSP forbids eval).
    const handle = await page.waitForFunction(
      ([name, q]) =>
        (globalThis as any).performance
          .getEntriesByName(name)
          .find((e: { detail?: unknown }) => e.detail === q)?.duration as number | undefined,
      [PAINT_MEASURE, wanted] as const,
      { timeout: 10_000, polling: 50 },
    );
    const paintMs = (await handle.jsonValue()) as number;
    const apiMs = await page.evaluate((q) => {
      const entries = (globalThis as any).performance
        .getEntriesByType('resource')
        .filter((e: { name: string; responseEnd: number }) => {
          const u = new URL(e.name);
          return u.pathname === '/api/brains/' && u.searchParams.get('search') === q && e.responseEnd > 0;
        }) as { startTime: number; responseEnd: number }[];
      const last = entries[entries.length - 1];
      return last ? last.responseEnd - last.startTime : undefined;
    }, wanted);
    return { paintMs, apiMs };
  } catch {
    if (process.env.BENCH_WEB_DEBUG)
      printDetail(
        `never painted: "${text}" (url ${page.url()}, count "${await page.locator('.count').textContent()}", measures ${JSON.stringify(await page.evaluate(() => (globalThis as any).performance.getEntriesByType('measure').map((e: any) => [e.detail, Math.round(e.duration)])))})`,
      );
    return undefined;
  }
}

async function writeAndProject(databaseUrl: string, cleanup: Cleanup, brains: number): Promise<void> {
  const store = createPostgresEventStore({ connectionString: databaseUrl, poolSize: 10 });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', () => undefined);
  const close = cleanup.defer('web catalogue store', async () => {
    await pool.end();
    await store.close();
  });
  await store.migrate();
  const started = performance.now();
  const written = await writeCatalogue(store, brains, () => undefined);
  const runner = new ProjectionRunner({ store, pool, projections: allProjections, batchSize: 2000 });
  await runner.catchUp(() => undefined);
  await pool.query('ANALYZE');
  printDetail(
    `wrote and projected ${written.brains} brains (${written.events} events) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  await close();
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createMetrics } from '#shared/metrics/metrics';
import { runPromtool } from '#tests/support/promtool';

const DEPLOY = path.resolve(__dirname, '../../deploy');
const ALERTS = 'prometheus/alerts.yml';
const DASHBOARD = 'grafana/dashboards/catalogue.json';

/** Namespaces of the metrics our processes expose (ours and prom-client's defaults). */
const METRIC_NAME =
  /\b(?:http|events|event_store|projection|upload|supervised|process|nodejs|rate_limit|idempotency|read_your_writes)(?:_[a-z0-9]+)+\b/g;

/** Every series name a scrape can contain: families plus the _bucket/_sum/_count of histograms. */
async function exposedSeriesNames(): Promise<Set<string>> {
  const exposition = await createMetrics('deploy').render();
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name! + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name! + suffix);
  }
  return names;
}

describe('deploy/ monitoring queries', () => {
  test.each([ALERTS, DASHBOARD])('deploy/%s names only metrics the services expose', async (file) => {
    const exposed = await exposedSeriesNames();
    const referenced = new Set(readFileSync(path.join(DEPLOY, file), 'utf8').match(METRIC_NAME) ?? []);
    expect(referenced.size).toBeGreaterThan(3);
    expect([...referenced].filter((name) => !exposed.has(name))).toEqual([]);
  });

  test('the alert rules pass `promtool check rules`', async () => {
    const { code, output } = await runPromtool(['check', 'rules', path.join(DEPLOY, ALERTS)]);
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
  });
});

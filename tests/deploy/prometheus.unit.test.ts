import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runPromtool } from '#tests/support/promtool';

const PROMETHEUS = path.resolve(__dirname, '../../deploy/prometheus');
const DASHBOARD = path.resolve(__dirname, '../../deploy/grafana/dashboards/catalogue.json');
const KINDS = ['command-api', 'query-api', 'projector', 'processor', 'relay'];

interface Panel {
  readonly title: string;
  readonly targets?: readonly { readonly expr: string }[];
}

const panels = (): Panel[] => (JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] }).panels;
const exprsOf = (title: string): string[] =>
  (panels().find((panel) => panel.title === title)?.targets ?? []).map((target) => target.expr);

test('deploy/prometheus/prometheus.yml passes `promtool check config` as shipped (its rule file found beside it)', async () => {
  const { code, output } = await runPromtool(['check', 'config', path.join(PROMETHEUS, 'prometheus.yml')]);
  expect({ code, output }).toEqual({
    code: 0,
    output: expect.stringContaining('SUCCESS: 1 rule files found'),
  });
});

test('every alert rule has a `promtool test rules` case that fires it and one that does not', async () => {
  const tests = readFileSync(path.join(PROMETHEUS, 'tests/alerts.test.yml'), 'utf8');
  const alerts = [
    ...readFileSync(path.join(PROMETHEUS, 'alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g),
  ].map((match) => match[1]!);
  expect(alerts.length).toBeGreaterThan(10);
  for (const alert of alerts) {
    const cases = [...tests.matchAll(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:(.*)`, 'g'))];
    expect({ alert, firing: cases.some((c) => c[1]!.trim() === '') }).toEqual({ alert, firing: true });
    expect({ alert, quiet: cases.some((c) => c[1]!.trim() === '[]') }).toEqual({ alert, quiet: true });
  }
  const { code, output } = await runPromtool([
    'test',
    'rules',
    path.join(PROMETHEUS, 'tests/alerts.test.yml'),
  ]);
  expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
});

test('the availability alerts and the "Replicas up" panel cover all five kinds of process', () => {
  const alerts = readFileSync(path.join(PROMETHEUS, 'alerts.yml'), 'utf8');
  const targetDown = /alert: CatalogueTargetDown\n\s+expr: (.*)/.exec(alerts)![1]!;
  const serviceMissing = /alert: CatalogueServiceMissing[\s\S]*?for:/.exec(alerts)![0];
  for (const kind of KINDS) {
    expect(targetDown).toContain(kind);
    expect(serviceMissing).toContain(`up{job="${kind}"}`);
    expect(exprsOf('Replicas up').join(' ')).toContain(kind);
  }
});

test('the CPU and memory panels show only series of the catalogue services (a `service` label)', () => {
  for (const title of ['CPU by replica', 'Memory by replica', 'Event loop lag p99 by replica']) {
    const exprs = exprsOf(title);
    expect(exprs.length).toBeGreaterThan(0);
    for (const expr of exprs) expect(expr).toContain('service!=""');
  }
});

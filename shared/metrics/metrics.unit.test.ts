import { checkMetrics } from '#tests/support/promtool';
import { createMetrics } from './metrics';

/** A registry with a sample in every family this module defines (the e2e cannot make every one). */
async function populatedExposition(): Promise<string> {
  const metrics = createMetrics('unit');
  metrics.observeHttpRequest('GET', '/api/tokens/{token_id}/', 404, 0.004);
  metrics.eventsAppended('UserRegistered', 3);
  metrics.setProjectionPosition('read_models', { commit: 9n, prepare: 12n });
  metrics.setProjectionLag('read_models', 0.25);
  metrics.uploadProcessed('completed', 2);
  metrics.uploadProcessed('failed');
  metrics.setLoopUp('projection_runner', true);
  metrics.loopFailed('progress_listener');
  return metrics.render();
}

describe('createMetrics exposition', () => {
  test('passes `promtool check metrics` with every family populated', async () => {
    expect(await checkMetrics(await populatedExposition())).toEqual([]);
  });

  test('only counters end in _total, and no name carries a metric type', async () => {
    const types = [...(await populatedExposition()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(
      ([, name, type]) => ({ name: name!, type: type! }),
    );
    expect(types.length).toBeGreaterThan(10);
    expect(types.filter(({ name, type }) => name.endsWith('_total') !== (type === 'counter'))).toEqual([]);
    expect(types.filter(({ name }) => /_(counter|gauge|histogram|summary)(_|$)/.test(name))).toEqual([]);
  });

  test('the per-type active handle/request/resource gauges stay; their _total duplicates are gone', async () => {
    const exposition = await populatedExposition();
    for (const kind of ['handles', 'requests', 'resources']) {
      expect(exposition).toContain(`# TYPE nodejs_active_${kind} gauge`);
      expect(exposition).not.toContain(`nodejs_active_${kind}_total`);
    }
  });

  test('projection lag is a gauge (last batch) and a histogram (per batch)', async () => {
    const exposition = await populatedExposition();
    expect(exposition).toMatch(/^projection_lag_seconds\{[^}]*projection="read_models"[^}]*\} 0\.25$/m);
    expect(exposition).toMatch(
      /^projection_batch_lag_seconds_count\{[^}]*projection="read_models"[^}]*\} 1$/m,
    );
  });
});

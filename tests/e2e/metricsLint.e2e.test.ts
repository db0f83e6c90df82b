import { SYSTEM_ROUTE_PATHS } from '#shared/http/system/systemRoutes';
import { newUser } from '#tests/support/httpClient';
import { checkMetrics } from '#tests/support/promtool';
import { testServiceForFile } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';

const WAIT_MS = 30_000;
const POLL_MS = 100;
const RAW_ID = '4a1c2e9b-7d3f-4c1a-9e8b-2f6d5c4b3a21';

const { api } = testServiceForFile();

/** Sample lines (`name{labels} value`) of one series name, e.g. `projection_batch_lag_seconds_count`. */
function samples(exposition: string, name: string): string[] {
  return exposition.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

function sampleValue(line: string): number {
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function scrape(): Promise<string> {
  const res = await api.get('/metrics/');
  expect(res.status).toBe(200);
  return res.text;
}

const projected = (exposition: string): boolean =>
  samples(exposition, 'projection_batch_lag_seconds_count').some((line) => sampleValue(line) > 0) &&
  samples(exposition, 'projection_position').some((line) => sampleValue(line) > 0) &&
  samples(exposition, 'supervised_loop_up').some((line) => sampleValue(line) === 1);

describe('/metrics/ of the all-in-one after real traffic', () => {
  let exposition: string;

  beforeAll(async () => {
    const user = await newUser(api); // requests, events appended, then a projection batch
    await api.get('/api/auth/me/', { token: user.token });
    await api.delete(`/api/tokens/${RAW_ID}/`, { token: user.token });
    await api.get(`/api/no-such-route/${RAW_ID}/`);
    exposition = await waitFor("/metrics/ to show the projector's batch and the loops", scrape, {
      timeoutMs: WAIT_MS,
      intervalMs: POLL_MS,
      until: projected,
    });
  });

  test('passes `promtool check metrics` with no problem reported', async () => {
    expect(await checkMetrics(exposition)).toEqual([]);
  });

  test('every family the dashboards and alerts rely on is exposed, under its final name', () => {
    const families = new Set(
      [...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => `${match[1]} ${match[2]}`),
    );
    for (const family of [
      'http_requests_total counter',
      'http_request_duration_seconds histogram',
      'events_appended_total counter',
      'projection_position gauge',
      'projection_lag_seconds gauge',
      'projection_batch_lag_seconds histogram',
      'upload_processing_total counter',
      'upload_processing_duration_seconds histogram',
      'supervised_loop_up gauge',
      'supervised_loop_failures_total counter',
    ])
      expect(families).toContain(family);
    expect(samples(exposition, 'events_appended_total').length).toBeGreaterThan(0);
  });

  test('route labels are route templates or "unmatched", never raw paths', async () => {
    const schema = await api.get('/api/schema/');
    const templates = new Set<string>([
      ...Object.keys(schema.body.paths as Record<string, unknown>),
      ...SYSTEM_ROUTE_PATHS,
      'unmatched',
    ]);
    const routes = new Set([...exposition.matchAll(/route="([^"]*)"/g)].map((match) => match[1]));
    expect(routes).toContain('/api/tokens/{token_id}/');
    expect(routes).toContain('unmatched');
    expect([...routes].filter((route) => !templates.has(route!))).toEqual([]);
    expect(exposition).not.toContain(RAW_ID);
  });
});

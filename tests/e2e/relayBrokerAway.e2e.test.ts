import { freePort } from '#tests/support/freePort';
import { client, newUser } from '#tests/support/httpClient';
import { startTestService, type TestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';

/**
 * The all-in-one configured with a Kafka broker that is not there: the API works as ever, /health/
 * says the relay cannot publish (the broker is named), and the service still stops at once.
 */
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ KAFKA_BROKERS: `127.0.0.1:${await freePort()}` });
});

test('the API answers while the broker is away; /health/ names the relay and the broker as failing', async () => {
  const api = client(service.url);
  const user = await newUser(api);
  expect((await api.get('/api/auth/me/', { token: user.token })).status).toBe(200);
  const health = await waitFor('/health/ to report the relay as failing', () => api.get('/health/'), {
    timeoutMs: 20_000,
    intervalMs: 200,
    until: (res) => res.body.checks?.kafka_relay?.status !== 'ok',
  });
  expect(health.status).toBe(503);
  expect(health.body.checks.kafka.status).not.toBe('ok');
  expect(health.body.checks.kafka_relay.status).not.toBe('ok');
  expect(health.body.checks.postgres.status).toBe('ok');
}, 60_000);

test('the service stops without waiting for the broker', async () => {
  const started = Date.now();
  await service.close();
  expect(Date.now() - started).toBeLessThan(10_000);
});

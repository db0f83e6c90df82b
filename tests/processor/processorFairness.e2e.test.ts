import { type Client, client, newUser } from '#tests/support/httpClient';
import { type TestService, startTestService } from '#tests/support/testService';
import { upload } from '#tests/e2e/uploads/uploadFixtures';
import { waitFor } from '#tests/support/waitFor';
import { TEST_INSPECTOR } from './support/processorFixture';

/**
 * The all-in-one over HTTP with one processor slot for uploads of any size (as on a two-core
 * machine). The test inspector stands in for a long inspection: `slow-<ms>-` files take that long.
 */
let service: TestService;
let api: Client;

beforeAll(async () => {
  service = await startTestService({
    PROCESSOR_INSPECTOR_MODULE: TEST_INSPECTOR,
    PROCESSOR_CONCURRENCY: '1',
    PROCESSOR_SMALL_UPLOAD_MB: '1',
    // A's inspections must last longer than the test: their limit (base + per GiB) is the cap.
    PROCESSOR_TIMEOUT_BASE_SECONDS: '600',
  });
  api = client(service.url);
});
afterAll(() => service.close());

const BIG = Buffer.alloc(2 * 1024 * 1024, 7);

async function status(token: string, id: string): Promise<string> {
  const res = await api.get(`/api/file-uploads/${id}/`, { token });
  expect(res.status).toBe(200);
  return res.body.status as string;
}

test("a user's 1 KB upload is completed within 10 s while another's long inspections hold the only slot", async () => {
  const [alice, bob] = [await newUser(api), await newUser(api)];
  const queued: string[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await upload(api, alice.token, `slow-120000-scan-${i}.nii`, BIG);
    expect(res.status).toBe(201);
    queued.push(res.body.id as string);
  }
  await waitFor("Alice's first upload to be processing", () => status(alice.token, queued[0]!), {
    timeoutMs: 30_000,
    intervalMs: 50,
    until: (state) => state === 'processing',
  });

  const sent = Date.now();
  const res = await upload(api, bob.token, 'scan.nii', Buffer.alloc(1024, 1));
  expect(res.status).toBe(201);
  const id = res.body.id as string;
  await waitFor('the 1 KB upload to complete within 10 s of being sent', () => status(bob.token, id), {
    timeoutMs: 10_000,
    intervalMs: 50,
    until: (state) => state === 'completed',
  });

  expect(Date.now() - sent).toBeLessThan(10_000);
  // Alice's first upload is still being inspected; her others still wait for the slot.
  expect(await status(alice.token, queued[0]!)).toBe('processing');
  for (const other of queued.slice(1)) expect(await status(alice.token, other)).toBe('uploaded');
});

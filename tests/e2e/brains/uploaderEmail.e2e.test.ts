import { client, newUser } from '#tests/support/httpClient';
import { type TestService, startTestService } from '#tests/support/testService';
import { brainForm, createTaxonomy, fresh, nifti } from './brainFixtures';

/** UPLOADER_EMAIL_VISIBILITY=owner: shape A shows an uploader's email to them and to staff only. */
let service: TestService;

beforeAll(async () => {
  service = await startTestService({
    ADMIN_EMAIL: 'curator@example.org',
    ADMIN_PASSWORD: 'curator-password',
    ADMIN_USERNAME: 'curator',
    UPLOADER_EMAIL_VISIBILITY: 'owner',
  });
});
afterAll(() => service.close());

test('the uploader and staff see the email; another user and anonymous callers see ""', async () => {
  const api = client(service.url);
  const login = await api.post('/api/auth/login/', {
    json: { email: 'curator@example.org', password: 'curator-password' },
  });
  const staff = login.body.token as string;
  const [alice, bob] = await Promise.all([newUser(api), newUser(api)]);
  const { atlas } = await createTaxonomy(api, staff);
  const name = fresh('private');
  const created = await api.post('/api/brains/', {
    token: alice.token,
    body: brainForm({ name, atlas: atlas.id }, nifti()),
  });
  expect(created.status).toBe(201);
  const readableId = created.body.readable_id as string;

  const emailSeenBy = async (token: string | undefined) => {
    const detail = await api.get(`/api/brains/${readableId}/`, { token });
    const listed = await api.get(`/api/brains/?search=${encodeURIComponent(name)}`, { token });
    expect(detail.status).toBe(200);
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0].uploader.email).toBe(detail.body.uploader.email);
    return detail.body.uploader.email as string;
  };
  expect(await emailSeenBy(alice.token)).toBe(alice.email);
  expect(await emailSeenBy(staff)).toBe(alice.email);
  expect(await emailSeenBy(bob.token)).toBe('');
  expect(await emailSeenBy(undefined)).toBe('');
});

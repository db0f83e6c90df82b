import { type Client, client } from './httpClient';
import { type TestService, startTestService } from './testService';

/** The staff account the curated test services create at start-up (ADMIN_*). */
export const CURATOR = { email: 'curator@example.org', password: 'curator-password', username: 'curator' };

export interface CuratedService {
  readonly service: TestService;
  readonly api: Client;
  /** A login token of the curator (staff). */
  readonly staff: string;
}

/** startTestService with the curator as its staff account (plus `env`), and the curator logged in. */
export async function startCuratedService(env: Record<string, string> = {}): Promise<CuratedService> {
  const service = await startTestService({
    ADMIN_EMAIL: CURATOR.email,
    ADMIN_PASSWORD: CURATOR.password,
    ADMIN_USERNAME: CURATOR.username,
    ...env,
  });
  const api = client(service.url);
  const login = await api.post('/api/auth/login/', {
    json: { email: CURATOR.email, password: CURATOR.password },
  });
  if (login.status !== 200) throw new Error(`curator login: ${login.status} ${login.text}`);
  return { service, api, staff: login.body.token as string };
}

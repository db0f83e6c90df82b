import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildServiceApiDocument } from '#services/all-in-one/apiDocument';
import { routeKeysOf } from '#shared/apiContract/apiContract';

const committed = JSON.parse(
  readFileSync(path.join(__dirname, '../../shared/apiContract/openapi.json'), 'utf8'),
) as ReturnType<typeof buildServiceApiDocument>;

test('the committed API document is the one the route specs make (else run `npm run openapi`)', () => {
  expect(committed).toEqual(buildServiceApiDocument());
});

test('a service started alone knows every operation of the others from it', () => {
  const keys = routeKeysOf(committed).map((k) => `${k.method} ${k.path}`);
  expect(keys).toEqual(
    expect.arrayContaining([
      'post /api/auth/register/',
      'get /api/auth/me/',
      'delete /api/tokens/{token_id}/',
    ]),
  );
  expect(keys).not.toContain('parameters /api/tokens/{token_id}/');
});

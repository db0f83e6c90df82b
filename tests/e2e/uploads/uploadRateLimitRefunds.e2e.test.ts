import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';
import { upload } from './uploadFixtures';

const { api } = testServiceForFile({ RATE_LIMIT_UPLOAD: '2/hour' });

test('uploads refused as invalid (400) or of the wrong body type (415) do not use up the upload limit', async () => {
  const user = await newUser(api);
  const refused: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    refused.push((await api.post('/api/file-uploads/', { token: user.token, json: {} })).status);
    refused.push(
      (
        await api.post('/api/file-uploads/', {
          token: user.token,
          body: 'not a form',
          headers: { 'Content-Type': 'text/plain' },
        })
      ).status,
    );
    refused.push(
      (
        await api.post('/api/brains/', {
          token: user.token,
          body: 'name=x',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        })
      ).status,
    );
  }
  expect(refused.every((status) => status === 400 || status === 415)).toBe(true);
  expect(refused).toContain(415);
  expect((await upload(api, user.token, 'one.nii', Buffer.from('1'))).status).toBe(201);
  const second = await upload(api, user.token, 'two.nii', Buffer.from('2'));
  expect(second.status).toBe(201);
  expect(second.headers.get('x-ratelimit-remaining')).toBe('0');
  // The limit itself still holds: a third real upload is refused.
  expect((await upload(api, user.token, 'three.nii', Buffer.from('3'))).status).toBe(429);
});

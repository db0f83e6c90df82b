import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';
import { createTus, fileUpload, headTus, idOf, patchTus, randomFile, sha256, tusUpload } from './tusFixtures';

const EXPIRY_SECONDS = 8;
const { api, service } = testServiceForFile({
  TUS_EXPIRY_SECONDS: String(EXPIRY_SECONDS),
  TUS_CLEANUP_INTERVAL_SECONDS: '1',
  BLOB_SWEEP_INTERVAL_SECONDS: '1',
  BLOB_SWEEP_ORPHAN_GRACE_SECONDS: '1',
  BLOB_SWEEP_LEFTOVER_GRACE_SECONDS: '1',
});

const blobFile = (...key: string[]): string => path.join(service().dataDir, 'blobs', ...key);

async function tusRow(id: string): Promise<{ completed: boolean } | undefined> {
  const db = new PgClient({ connectionString: service().databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ completed: boolean }>(
      'SELECT completed_at IS NOT NULL AS completed FROM tus.uploads WHERE id = $1',
      [id],
    );
    return rows[0];
  } finally {
    await db.end();
  }
}

test('the blob sweep leaves uploads in progress alone; expired ones are removed with their rows', async () => {
  const alice = await newUser(api);
  const url = (await createTus(service().url, alice.token, 1000, { filename: 'slow.nii' })).headers.get(
    'location',
  )!;
  const id = idOf(url);
  expect((await patchTus(url, alice.token, 0, randomFile(300))).status).toBe(204);
  const done = randomFile(500);
  const finished = await tusUpload(service().url, alice.token, done, { filename: 'done.nii' });
  // An orphan stored beside them: once it is swept, sweeps have looked at the tus files too.
  mkdirSync(blobFile('uploads'), { recursive: true });
  writeFileSync(blobFile('uploads', 'orphan.nii'), 'x');
  await waitFor('an orphan to be swept', () => !existsSync(blobFile('uploads', 'orphan.nii')), {
    until: (gone) => gone,
  });
  expect(existsSync(blobFile('uploads', 'tus', id))).toBe(true);
  expect((await headTus(url, alice.token)).headers.get('upload-offset')).toBe('300');

  // Past Upload-Expires: 410; the cleanup takes the bytes, and the creator is still told 410 (not
  // 404) until the tombstone is forgotten one expiry period later.
  await waitFor('the upload to expire', () => headTus(url, alice.token), {
    until: (res) => res.status === 410,
    timeoutMs: (EXPIRY_SECONDS + 5) * 1000,
  });
  expect((await patchTus(url, alice.token, 300, randomFile(10))).status).toBe(410);
  await waitFor("the expired upload's bytes to be removed", () => existsSync(blobFile('uploads', 'tus', id)), {
    until: (present) => !present,
    timeoutMs: 10_000,
  });
  expect((await headTus(url, alice.token)).status).toBe(410);
  expect((await patchTus(url, alice.token, 300, randomFile(10))).status).toBe(410);
  const bob = await newUser(api);
  expect((await headTus(url, bob.token)).status).toBe(404);
  await waitFor('the tombstone to be forgotten', () => tusRow(id), {
    until: (row) => row === undefined,
    timeoutMs: (EXPIRY_SECONDS + 10) * 1000,
  });
  expect((await headTus(url, alice.token)).status).toBe(404);

  // A finished upload's row is forgotten one expiry period after completion; its bytes stay.
  await waitFor('the finished row to be purged', () => tusRow(idOf(finished.url)), {
    until: (row) => row === undefined,
    timeoutMs: (EXPIRY_SECONDS + 10) * 1000,
  });
  const recorded = await fileUpload(api, alice.token, idOf(finished.url));
  expect(recorded.status).toBe(200);
  const download = await fetch(`${service().url}/api/file-uploads/${idOf(finished.url)}/download/`, {
    headers: { Authorization: `Token ${alice.token}` },
  });
  expect(download.status).toBe(200);
  expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(done));
}, 90_000);

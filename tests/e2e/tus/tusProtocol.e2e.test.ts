import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';
import {
  TUS,
  createTus,
  fileUpload,
  headTus,
  idOf,
  patchTus,
  randomFile,
  sha256,
  tusUpload,
} from './tusFixtures';

const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;
const { api, service } = testServiceForFile({ MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) });

describe('tus uploads', () => {
  test('tus-js-client uploads in chunks; the upload is recorded under the id of its URL', async () => {
    const alice = await newUser(api);
    const bytes = randomFile(300_000);
    const { url } = await tusUpload(
      service().url,
      alice.token,
      bytes,
      { filename: 'scan.nii.gz', name: 'Scan A' },
      {
        chunkSize: 100_000,
      },
    );
    expect(url).toMatch(new RegExp(`^${service().url}${TUS}[0-9a-f-]{36}$`));
    const res = await fileUpload(api, alice.token, idOf(url));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: idOf(url), name: 'Scan A', filename: 'scan.nii.gz' });
    const download = await fetch(`${service().url}/api/file-uploads/${idOf(url)}/download/`, {
      headers: { Authorization: `Token ${alice.token}` },
    });
    expect(download.status).toBe(200);
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(bytes));
  });

  test('before its last byte an upload is absent; HEAD tells the offset', async () => {
    const alice = await newUser(api);
    const created = await createTus(service().url, alice.token, 1000, { filename: 'a.nii' });
    expect(created.status).toBe(201);
    const url = created.headers.get('location')!;
    const patched = await patchTus(url, alice.token, 0, randomFile(400));
    expect(patched.status).toBe(204);
    expect(patched.headers.get('upload-offset')).toBe('400');
    const head = await headTus(url, alice.token);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('400');
    expect(head.headers.get('upload-length')).toBe('1000');
    expect((await fileUpload(api, alice.token, idOf(url))).status).toBe(404);
  });
});

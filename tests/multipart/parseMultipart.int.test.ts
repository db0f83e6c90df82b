import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';
import { ValidationError } from '#shared/errors/httpErrors';
import {
  cleanupStoredFiles,
  parseMultipart,
  type ParseMultipartOptions,
  type ParsedMultipart,
} from '#shared/multipart/parseMultipart';
import { multipartBody, randomChunks, type FormPart } from './multipartBody';
import { UploadServer } from './uploadServer';

const MiB = 1024 * 1024;
let rootDir: string;
let blobStore: BlobStore;
let server: UploadServer | undefined;
let keys: number;

beforeEach(async () => {
  rootDir = await mkdtemp(path.join(tmpdir(), 'uploads-'));
  blobStore = createLocalDiskBlobStore({ rootDir });
  keys = 0;
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await rm(rootDir, { recursive: true, force: true });
});

const avatarOnly = (maxBytes = MiB): ParseMultipartOptions['files'] => ({
  avatar: {
    keyFor: ({ filename }) => `avatars/7/${++keys}-${path.extname(filename).replace(/[^.a-z]/gi, '')}`,
    maxBytes,
  },
});

async function serve(
  options: Partial<ParseMultipartOptions> = {},
  afterParse?: (parsed: ParsedMultipart) => Promise<void>,
) {
  server = new UploadServer(async (req: IncomingMessage) => {
    const parsed = await parseMultipart(req, { blobStore, files: avatarOnly(), ...options });
    await afterParse?.(parsed);
    const files = Object.fromEntries(
      Object.entries(parsed.files).map(([field, { head, ...file }]) => [
        field,
        { ...file, head: head.toString('base64') },
      ]),
    );
    return { fields: parsed.fields, files };
  });
  await server.start();
  return server;
}

async function post(parts: FormPart[], options: { truncateAfterBytes?: number } = {}) {
  const body = multipartBody(parts, options);
  if (!server) throw new Error('no server');
  return server.send({ 'Content-Type': body.contentType }, body.stream());
}

/** Every regular file in the store's directory tree: what a failed request must not leave. */
async function storedFiles(): Promise<string[]> {
  const entries = await readdir(rootDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(rootDir, path.join(entry.parentPath, entry.name)));
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('parseMultipart stores declared files and collects fields', () => {
  test('fields and a file: the file is in the store, described by key, base name, type, size, sha256 and head', async () => {
    await serve({ headBytes: 16 });
    const png = randomBytes(5000);

    const response = await post([
      { name: 'first_name', value: 'Santiago' },
      { name: 'avatar', filename: 'C:\\fakepath\\brain scan.png', contentType: 'image/png', content: png },
      { name: 'bio', value: 'Neuroanatomist – ünïcödé' },
    ]);

    expect(response).toEqual({
      status: 200,
      body: {
        fields: { first_name: 'Santiago', bio: 'Neuroanatomist – ünïcödé' },
        files: {
          avatar: {
            field: 'avatar',
            key: 'avatars/7/1-.png',
            filename: 'brain scan.png',
            mimeType: 'image/png',
            size: 5000,
            sha256: sha256(png),
            head: png.subarray(0, 16).toString('base64'),
          },
        },
      },
    });
    expect(await readFile(path.join(rootDir, 'avatars/7/1-.png'))).toEqual(png);
    expect(await blobStore.stat('avatars/7/1-.png')).toEqual({
      key: 'avatars/7/1-.png',
      size: 5000,
      contentType: 'image/png',
    });
  });

  test('a UTF-8 file name arrives intact, and a path in it is reduced to its base name', async () => {
    await serve();
    const response = await post([
      { name: 'avatar', filename: '../../etc/Gehirn-Übersicht.png', content: Buffer.from('x') },
    ]);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      files: { avatar: { filename: 'Gehirn-Übersicht.png', mimeType: 'application/octet-stream' } },
    });
  });

  test('several declared file fields are each stored once', async () => {
    await serve({
      files: {
        avatar: { keyFor: () => 'multi/avatar', maxBytes: MiB },
        banner: { keyFor: () => 'multi/banner', maxBytes: MiB },
      },
    });
    const response = await post([
      { name: 'avatar', filename: 'a.gif', content: Buffer.from('GIF89a...') },
      { name: 'banner', filename: 'b.bmp', content: Buffer.from('BM...') },
    ]);
    expect(response.status).toBe(200);
    expect((await storedFiles()).sort()).toEqual([
      'multi/avatar',
      'multi/avatar~meta.json',
      'multi/banner',
      'multi/banner~meta.json',
    ]);
  });

  test('a form without files is just fields', async () => {
    await serve();
    const response = await post([{ name: 'location', value: 'Madrid' }]);
    expect(response).toEqual({ status: 200, body: { fields: { location: 'Madrid' }, files: {} } });
  });

  test('a multi-MiB file is streamed into the store whole', async () => {
    await serve({ files: avatarOnly(64 * MiB) });
    const hash = createHash('sha256');
    const response = await post([
      {
        name: 'avatar',
        filename: 'big.tif',
        content: randomChunks(24 * MiB + 11, (chunk) => hash.update(chunk)),
      },
    ]);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      files: { avatar: { size: 24 * MiB + 11, sha256: hash.digest('hex') } },
    });
  });
});

describe('parseMultipart failures answer over HTTP and leave no stored bytes', () => {
  test('a file over its limit: 413 naming the limit, sent after the whole 8 MiB body, nothing stored', async () => {
    await serve({ files: avatarOnly(MiB) });

    const response = await post([{ name: 'avatar', filename: 'huge.png', content: randomChunks(8 * MiB) }]);

    expect(response).toEqual({
      status: 413,
      body: { detail: 'The file in "avatar" is larger than the limit of 1 MiB (1048576 bytes).' },
    });
    expect(await storedFiles()).toEqual([]);
  });

  test('a second file over its limit also removes the first, already stored, file', async () => {
    await serve({
      files: {
        avatar: { keyFor: () => 'two/avatar', maxBytes: MiB },
        banner: { keyFor: () => 'two/banner', maxBytes: 1000 },
      },
    });
    const response = await post([
      { name: 'avatar', filename: 'a.png', content: randomBytes(200_000) },
      { name: 'banner', filename: 'b.png', content: randomBytes(3000) },
    ]);
    expect(response).toEqual({
      status: 413,
      body: { detail: 'The file in "banner" is larger than the limit of 1000 bytes.' },
    });
    expect(await storedFiles()).toEqual([]);
  });

  test('a file in an undeclared field: 400 on that field, and the declared file before it is removed', async () => {
    await serve();
    const response = await post([
      { name: 'avatar', filename: 'a.png', content: randomBytes(1000) },
      { name: 'resume', filename: 'cv.pdf', content: randomChunks(6 * MiB) },
    ]);
    expect(response).toEqual({ status: 400, body: { resume: ['Unexpected file field.'] } });
    expect(await storedFiles()).toEqual([]);
  });

  test('the same file field twice: 400 on that field, nothing stored', async () => {
    await serve();
    const response = await post([
      { name: 'avatar', filename: 'a.png', content: randomBytes(1000) },
      { name: 'avatar', filename: 'b.png', content: randomBytes(1000) },
    ]);
    expect(response).toEqual({ status: 400, body: { avatar: ['Only one file may be sent in this field.'] } });
    expect(await storedFiles()).toEqual([]);
  });

  test('too many fields: 400', async () => {
    await serve({ maxFields: 3 });
    const fields = ['a', 'b', 'c', 'd'].map((name) => ({ name, value: name }));
    const response = await post([
      { name: 'avatar', filename: 'a.png', content: randomBytes(100) },
      ...fields,
    ]);
    expect(response).toEqual({ status: 400, body: { detail: 'Too many form fields: the limit is 3.' } });
    expect(await storedFiles()).toEqual([]);
  });

  test('a field over its limit: 413 naming the limit', async () => {
    await serve({ maxFieldBytes: 100 });
    const response = await post([{ name: 'bio', value: 'x'.repeat(101) }]);
    expect(response).toEqual({
      status: 413,
      body: { detail: 'The form field "bio" is larger than the limit of 100 bytes.' },
    });
  });

  test('a body cut short before the closing boundary: 400 parse error, the partial file removed', async () => {
    await serve();
    const response = await post([{ name: 'avatar', filename: 'a.png', content: randomBytes(300_000) }], {
      truncateAfterBytes: 200_000,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      detail: 'Multipart form parse error - Unexpected end of multipart data',
    });
    expect(await storedFiles()).toEqual([]);
  });

  test('garbage instead of multipart: 400 parse error', async () => {
    await serve();
    const response = await server!.send(
      { 'Content-Type': 'multipart/form-data; boundary=xyz' },
      Readable.from([randomBytes(100_000)]),
    );
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: expect.stringMatching(/^Multipart form parse error - /) });
  });

  test('a multipart content type without boundary: 400', async () => {
    await serve();
    const response = await server!.send(
      { 'Content-Type': 'multipart/form-data' },
      Readable.from([randomBytes(300_000)]),
    );
    expect(response).toEqual({
      status: 400,
      body: { detail: expect.stringMatching(/^Multipart form parse error - .*[Bb]oundary/) },
    });
  });

  test('a body that is not multipart at all: 415', async () => {
    await serve();
    const response = await server!.send(
      { 'Content-Type': 'application/json' },
      Readable.from([Buffer.from('{"bio":"x"}')]),
    );
    expect(response).toEqual({
      status: 415,
      body: { detail: 'Unsupported media type "application/json" in request.' },
    });
  });

  test('a key the store refuses: the request fails and nothing is stored', async () => {
    await serve({ files: { avatar: { keyFor: () => '../outside', maxBytes: MiB } } });
    const response = await post([{ name: 'avatar', filename: 'a.png', content: randomBytes(500_000) }]);
    expect(response.status).toBe(500);
    expect(await storedFiles()).toEqual([]);
  });

  test('a client that vanishes mid-upload: the parse rejects and the partial file is removed', async () => {
    const uploads = await serve({ files: avatarOnly(64 * MiB) });
    const body = multipartBody([
      { name: 'bio', value: 'about to vanish' },
      { name: 'avatar', filename: 'a.png', content: randomChunks(16 * MiB) },
    ]);

    await uploads.abortAfter(
      { 'Content-Type': body.contentType, 'Content-Length': String(32 * MiB) },
      body.stream(),
      3 * MiB,
    );

    expect(uploads.outcomes).toHaveLength(1);
    const outcome = await uploads.outcomes[0]!;
    expect(outcome.ok).toBe(false);
    expect(await storedFiles()).toEqual([]);
  });

  test('cleanupStoredFiles lets a handler refuse a parsed request without leaving its files behind', async () => {
    await serve({}, async (parsed) => {
      expect(await storedFiles()).toHaveLength(2);
      await cleanupStoredFiles(blobStore, parsed.files);
      throw ValidationError.field('avatar', 'Upload a valid image.');
    });
    const response = await post([
      { name: 'avatar', filename: 'a.png', content: Buffer.from('not an image') },
    ]);
    expect(response).toEqual({ status: 400, body: { avatar: ['Upload a valid image.'] } });
    expect(await storedFiles()).toEqual([]);
  });
});

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from '#shared/blobStore/blobStore';
import { InvalidBlobKeyError } from '#shared/blobStore/blobKey';

/**
 * The BlobStore contract: every adapter runs this same suite (tests/contract/blobStore.*.int.test.ts).
 */
export interface BlobStoreContractFixture {
  /** Called in beforeAll, so it may use servers the test file started in its own beforeAll. */
  create(): BlobStore | Promise<BlobStore>;
  /**
   * Everything stored under a key prefix, partial state included (temp files, objects, incomplete
   * uploads where the backend can list them): what a failed put must not leave behind.
   */
  leftovers(prefix: string): Promise<string[]>;
  /** A body larger than this exercises the adapter's multi-chunk path (e.g. S3 multipart). */
  readonly largeBodyBytes?: number;
  /**
   * Leaves under prefix what a put killed mid-way leaves (a temp file, an incomplete multipart
   * upload); `touch` writes to it again, as a put still going would. Absent where the backend
   * cannot list such writes (s3rver has no ListMultipartUploads): there the store lists none.
   */
  readonly leaveLeftover?: (prefix: string) => Promise<{ readonly touch: () => Promise<void> }>;
}

const MiB = 1024 * 1024;

export function describeBlobStoreContract(name: string, fixture: BlobStoreContractFixture): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    const large = Math.max(fixture.largeBodyBytes ?? 0, 5 * MiB);

    beforeAll(async () => {
      store = await fixture.create();
    });

    test('ping answers', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    test('put then get round-trips the bytes with their size, sha256 and content type', async () => {
      const key = `${freshPrefix()}/scan.png`;
      const bytes = randomBytes(100 * 1024 + 7);

      const result = await store.put(key, chunkedBody(bytes, 4096), { contentType: 'image/png' });

      expect(result).toEqual({ key, size: bytes.length, sha256: sha256(bytes) });
      expect(await readAll(await store.get(key))).toEqual(bytes);
      expect(await store.stat(key)).toEqual({ key, size: bytes.length, contentType: 'image/png' });
    });

    test('a multi-MiB body is streamed through and stored whole', async () => {
      const key = `${freshPrefix()}/volume.nii`;
      const body = generatedBody(2 * large + 12345);

      const result = await store.put(key, body.stream, { contentType: 'application/octet-stream' });

      expect(result).toEqual({ key, size: 2 * large + 12345, sha256: body.sha256() });
      const stored = await hashStream(await store.get(key));
      expect(stored).toEqual({ size: result.size, sha256: result.sha256 });
    });

    test('an empty body is a valid blob, served as octet-stream when no type was given', async () => {
      const key = `${freshPrefix()}/empty`;
      const result = await store.put(key, Readable.from([]));
      expect(result).toEqual({ key, size: 0, sha256: sha256(Buffer.alloc(0)) });
      expect(await store.stat(key)).toEqual({ key, size: 0, contentType: 'application/octet-stream' });
      expect(await readAll(await store.get(key))).toEqual(Buffer.alloc(0));
    });

    test('a second put replaces the blob', async () => {
      const key = `${freshPrefix()}/replaced.txt`;
      await store.put(key, Readable.from([Buffer.from('first version')]), { contentType: 'text/plain' });
      await store.put(key, Readable.from([Buffer.from('second')]), { contentType: 'text/csv' });
      expect((await readAll(await store.get(key))).toString()).toBe('second');
      expect(await store.stat(key)).toEqual({ key, size: 6, contentType: 'text/csv' });
    });

    test('get takes an inclusive byte range, clamped at the end of the blob', async () => {
      const key = `${freshPrefix()}/ranged.bin`;
      const bytes = randomBytes(10_000);
      await store.put(key, chunkedBody(bytes, 1000));

      expect(await readAll(await store.get(key, { start: 10, end: 19 }))).toEqual(bytes.subarray(10, 20));
      // Not { start: 0, end: 0 }: s3rver, the test S3 server, answers bytes=0-0 with the whole object.
      expect(await readAll(await store.get(key, { start: 1, end: 1 }))).toEqual(bytes.subarray(1, 2));
      expect(await readAll(await store.get(key, { start: 9_990 }))).toEqual(bytes.subarray(9_990));
      expect(await readAll(await store.get(key, { start: 9_997, end: 20_000 }))).toEqual(
        bytes.subarray(9_997),
      );
      await expect(store.get(key, { start: 10_000 })).rejects.toBeInstanceOf(RangeError);
      await expect(store.get(key, { start: 5, end: 4 })).rejects.toBeInstanceOf(RangeError);
    });

    test('stat of an absent key is undefined and get rejects with BlobNotFoundError', async () => {
      const key = `${freshPrefix()}/absent.bin`;
      expect(await store.stat(key)).toBeUndefined();
      await expect(store.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.get(key, { start: 0, end: 9 })).rejects.toBeInstanceOf(BlobNotFoundError);
    });

    test('delete removes the blob, and deleting an absent key is fine', async () => {
      const key = `${freshPrefix()}/deleted.bin`;
      await store.put(key, Readable.from([randomBytes(2048)]));

      await store.delete(key);

      expect(await store.stat(key)).toBeUndefined();
      await expect(store.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(store.delete(key)).resolves.toBeUndefined();
      await expect(store.delete(`${freshPrefix()}/never-there`)).resolves.toBeUndefined();
    });

    test('a body of exactly maxBytes is accepted', async () => {
      const key = `${freshPrefix()}/exact.bin`;
      const bytes = randomBytes(4096);
      const result = await store.put(key, chunkedBody(bytes, 1000), { maxBytes: 4096 });
      expect(result.size).toBe(4096);
    });

    test('a body over maxBytes is rejected with BlobTooLargeError, its source destroyed, nothing stored', async () => {
      const prefix = freshPrefix();
      const key = `${prefix}/too-large.bin`;
      const body = chunkedBody(randomBytes(50_000), 1000);

      const error = await store.put(key, body, { maxBytes: 4096 }).catch((err: unknown) => err);

      expect(error).toBeInstanceOf(BlobTooLargeError);
      expect((error as BlobTooLargeError).maxBytes).toBe(4096);
      expect(body.destroyed).toBe(true);
      await expectNothingStored(prefix, key);
    });

    test('a large body over maxBytes leaves nothing, even after parts were written', async () => {
      const prefix = freshPrefix();
      const key = `${prefix}/too-large-multipart.bin`;
      const body = generatedBody(large + 3 * MiB);

      const error = await store.put(key, body.stream, { maxBytes: large + MiB }).catch((err: unknown) => err);

      expect(error).toBeInstanceOf(BlobTooLargeError);
      await expectNothingStored(prefix, key);
    });

    test('a body that errors mid-way rejects with its error and leaves nothing', async () => {
      const prefix = freshPrefix();
      const key = `${prefix}/broken.bin`;
      const failure = new Error('disk on the client side caught fire');

      await expect(store.put(key, failingBody(300 * 1024, failure))).rejects.toBe(failure);

      await expectNothingStored(prefix, key);
    });

    test('a large body that errors after parts were written leaves nothing', async () => {
      const prefix = freshPrefix();
      const key = `${prefix}/broken-multipart.bin`;
      const failure = new Error('connection lost');

      await expect(store.put(key, failingBody(large + 2 * MiB, failure))).rejects.toBe(failure);

      await expectNothingStored(prefix, key);
    });

    test('a body destroyed mid-way (client abort) rejects and leaves nothing', async () => {
      const prefix = freshPrefix();
      const key = `${prefix}/aborted.bin`;
      const body = new PassThrough();
      body.write(randomBytes(256 * 1024));
      setTimeout(() => body.destroy(), 20);

      await expect(store.put(key, body)).rejects.toThrow();

      await expectNothingStored(prefix, key);
    });

    test.each(['../escape', '/etc/passwd', 'a/../../b', 'a//b', 'a\\b', '', 'trailing/', 'sp ace', 'a/./b'])(
      'key %j is rejected',
      async (key) => {
        await expect(store.put(key, Readable.from([Buffer.from('x')]))).rejects.toBeInstanceOf(
          InvalidBlobKeyError,
        );
        await expect(store.get(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
        await expect(store.stat(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
        await expect(store.delete(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
      },
    );

    test('list names the blobs under a prefix with their size and when they were stored', async () => {
      const prefix = freshPrefix();
      const before = Date.now();
      await store.put(`${prefix}/a.bin`, Readable.from([randomBytes(10)]));
      await store.put(`${prefix}/deeper/b.bin`, Readable.from([randomBytes(2000)]));
      await store.put(`${prefix}-sibling/c.bin`, Readable.from([randomBytes(5)]));
      const after = Date.now();

      const listed = await listAll(store.list(`${prefix}/`));

      expect(listed.map(({ key, size }) => ({ key, size }))).toEqual([
        { key: `${prefix}/a.bin`, size: 10 },
        { key: `${prefix}/deeper/b.bin`, size: 2000 },
      ]);
      // S3 keeps LastModified to the second.
      for (const { storedAt } of listed) {
        expect(storedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
        expect(storedAt.getTime()).toBeLessThanOrEqual(after + 1000);
      }
      const everything = (await listAll(store.list())).map((blob) => blob.key);
      expect(everything).toEqual(expect.arrayContaining([`${prefix}/a.bin`, `${prefix}-sibling/c.bin`]));
      expect(await listAll(store.list(`${freshPrefix()}/`))).toEqual([]);
    });

    test('a deleted blob is no longer listed', async () => {
      const prefix = freshPrefix();
      await store.put(`${prefix}/gone.bin`, Readable.from([randomBytes(10)]));
      await store.delete(`${prefix}/gone.bin`);
      expect(await listAll(store.list(`${prefix}/`))).toEqual([]);
    });

    test('a put in progress is neither a blob nor a leftover', async () => {
      const prefix = freshPrefix();
      const body = new PassThrough();
      const put = store.put(`${prefix}/in-progress.bin`, body);
      // Past one part, so the S3 adapter has begun a multipart upload.
      body.write(randomBytes(large + 4096));
      await new Promise((resolve) => setTimeout(resolve, 300));

      expect(await listAll(store.list(`${prefix}/`))).toEqual([]);
      expect(await leftoversUnder(prefix)).toEqual([]);

      body.end(randomBytes(10));
      expect((await put).size).toBe(large + 4096 + 10);
      expect((await listAll(store.list(`${prefix}/`))).map((blob) => blob.key)).toEqual([
        `${prefix}/in-progress.bin`,
      ]);
    });

    if (fixture.leaveLeftover) {
      const leaveLeftover = fixture.leaveLeftover;

      test('what a killed put left is listed as a leftover, not a blob, and removed once', async () => {
        const prefix = freshPrefix();
        await leaveLeftover(prefix);

        const [leftover, ...more] = await leftoversUnder(prefix);

        expect(more).toEqual([]);
        expect(leftover!.size).toBeGreaterThan(0);
        expect(Date.now() - leftover!.touchedAt.getTime()).toBeLessThan(60_000);
        expect(await listAll(store.list(`${prefix}/`))).toEqual([]);
        expect(await store.removeLeftover(leftover!)).toBe(true);
        expect(await store.removeLeftover(leftover!)).toBe(false);
        expect(await leftoversUnder(prefix)).toEqual([]);
        expect(await fixture.leftovers(prefix)).toEqual([]);
      });

      test('a leftover written to after it was listed is kept', async () => {
        const prefix = freshPrefix();
        const { touch } = await leaveLeftover(prefix);
        const [leftover] = await leftoversUnder(prefix);
        // Past the resolution of the store's clock (S3: one second).
        await new Promise((resolve) => setTimeout(resolve, 1100));
        await touch();

        expect(await store.removeLeftover(leftover!)).toBe(false);
        const [listedAgain, ...more] = await leftoversUnder(prefix);
        expect(more).toEqual([]);
        expect(listedAgain!.touchedAt.getTime()).toBeGreaterThan(leftover!.touchedAt.getTime());
        // Listed again, as it now stands, it goes.
        expect(await store.removeLeftover(listedAgain!)).toBe(true);
        expect(await fixture.leftovers(prefix)).toEqual([]);
      });
    } else {
      test('a store that cannot list partial writes lists no leftovers', async () => {
        expect(await listAll(store.listLeftovers())).toEqual([]);
      });
    }

    async function leftoversUnder(prefix: string) {
      return (await listAll(store.listLeftovers())).filter((leftover) =>
        leftover.id.startsWith(`${prefix}/`),
      );
    }

    async function expectNothingStored(prefix: string, key: string): Promise<void> {
      expect(await store.stat(key)).toBeUndefined();
      await expect(store.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
      expect(await fixture.leftovers(prefix)).toEqual([]);
    }
  });
}

async function listAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

function freshPrefix(): string {
  return `contract/${randomUUID()}`;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function chunkedBody(bytes: Buffer, chunkSize: number): Readable {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += chunkSize)
    chunks.push(bytes.subarray(offset, offset + chunkSize));
  return Readable.from(chunks);
}

/** A body produced on demand, so the test itself never holds it in memory either. */
function generatedBody(size: number): { stream: Readable; sha256(): string } {
  const hash = createHash('sha256');
  function* produce() {
    for (let sent = 0; sent < size;) {
      const chunk = randomBytes(Math.min(64 * 1024, size - sent));
      hash.update(chunk);
      sent += chunk.length;
      yield chunk;
    }
  }
  return { stream: Readable.from(produce()), sha256: () => hash.digest('hex') };
}

function failingBody(bytesBeforeFailure: number, failure: Error): Readable {
  const { stream } = generatedBody(bytesBeforeFailure);
  async function* thenFail() {
    yield* stream;
    throw failure;
  }
  return Readable.from(thenFail());
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function hashStream(stream: Readable): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest('hex') };
}

import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { TusHttpError } from './tusHttpError';
import { TusRequestBody, readRequestBody } from './tusRequestBody';

const KiB = 1024;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Reads `body` as the local disk's write does, taking every chunk at once; resolves with the bytes taken. */
async function collect(body: PassThrough, stop: AbortSignal, maxBytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  await readRequestBody(body, stop, maxBytes, (chunk) => void parts.push(Buffer.from(chunk)));
  return Buffer.concat(parts);
}

const connectionReset = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });

describe('readRequestBody', () => {
  test('every chunk of a body that ends, in order', async () => {
    const body = new PassThrough();
    const bytes = randomBytes(300 * KiB);
    const read = collect(body, new AbortController().signal, bytes.length);
    for (let at = 0; at < bytes.length; at += 64 * KiB) body.write(bytes.subarray(at, at + 64 * KiB));
    body.end();
    expect((await read).equals(bytes)).toBe(true);
  });

  test('a client that went away (connection reset, or closed without an error): the bytes received are the body', async () => {
    for (const goAway of [
      (body: PassThrough) => body.destroy(connectionReset()),
      (body: PassThrough) => body.destroy(),
    ]) {
      const body = new PassThrough();
      const bytes = randomBytes(100 * KiB);
      const read = collect(body, new AbortController().signal, 1e9);
      body.write(bytes);
      await tick();
      goAway(body);
      expect((await read).equals(bytes)).toBe(true);
    }
  });

  test('any other failure of the body rejects, after the bytes received before it', async () => {
    const body = new PassThrough();
    const seen: number[] = [];
    const read = readRequestBody(
      body,
      new AbortController().signal,
      1e9,
      (chunk) => void seen.push(chunk.length),
    );
    body.write(randomBytes(10 * KiB));
    await tick();
    body.destroy(new Error('Parse Error: Invalid character in chunk size'));
    await expect(read).rejects.toThrow('Parse Error');
    expect(seen).toEqual([10 * KiB]);
  });

  test('stop ends a read that waits on a silent client; the request is left as it is (not destroyed)', async () => {
    const body = new PassThrough();
    const stop = new AbortController();
    const read = collect(body, stop.signal, 1e9);
    body.write(Buffer.from('first bytes'));
    await tick();
    stop.abort();
    expect((await read).toString()).toBe('first bytes');
    expect(body.destroyed).toBe(false);
    expect(body.listenerCount('data')).toBe(0);
  });

  test('more bytes than maxBytes: 413 before the chunk crossing it is taken', async () => {
    const body = new PassThrough();
    const seen: number[] = [];
    const read = readRequestBody(
      body,
      new AbortController().signal,
      100,
      (chunk) => void seen.push(chunk.length),
    );
    body.write(Buffer.alloc(60));
    await tick();
    body.write(Buffer.alloc(60));
    const error = await read.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(TusHttpError);
    expect((error as TusHttpError).status_code).toBe(413);
    expect(seen).toEqual([60]);
  });

  test('a busy take: later chunks wait in order, the request is paused once a MiB waits and flows again as they are taken', async () => {
    const body = new PassThrough({ highWaterMark: 16 * KiB });
    const taken: number[] = [];
    let release: (() => void) | undefined;
    const read = readRequestBody(body, new AbortController().signal, 1e9, (chunk) => {
      taken.push(chunk[0]!);
      // Every fourth chunk keeps take busy until released, as a full batch waits for the disk.
      if (taken.length % 4 !== 1) return undefined;
      return new Promise<void>((resolve) => (release = resolve));
    });
    for (let i = 0; i < 24; i += 1) body.write(Buffer.alloc(64 * KiB, i));
    await tick();
    expect(taken).toEqual([0]);
    expect(body.isPaused()).toBe(true);
    while (taken.length < 24) {
      const before = taken.length;
      release!();
      await tick();
      expect(taken.length).toBeGreaterThan(before);
    }
    expect(taken).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(body.isPaused()).toBe(false);
    body.end();
    release!();
    await read;
  });

  test('stop while take is busy: the read settles only once take is done with its chunk, and takes no more', async () => {
    const body = new PassThrough();
    const stop = new AbortController();
    const taken: number[] = [];
    let release!: () => void;
    let settled = false;
    const read = readRequestBody(body, stop.signal, 1e9, (chunk) => {
      taken.push(chunk[0]!);
      return taken.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : undefined;
    }).then(() => (settled = true));
    body.write(Buffer.alloc(10, 1));
    body.write(Buffer.alloc(10, 2));
    await tick();
    stop.abort();
    await tick();
    expect(settled).toBe(false);
    release();
    await read;
    expect(taken).toEqual([1]);
  });

  test('a take that fails ends the read with its failure', async () => {
    const body = new PassThrough();
    const read = readRequestBody(body, new AbortController().signal, 1e9, () =>
      Promise.reject(new Error('disk full')),
    );
    body.write(Buffer.alloc(10));
    await expect(read).rejects.toThrow('disk full');
    expect(body.listenerCount('data')).toBe(0);
  });
});

describe('TusRequestBody', () => {
  test('the request is claimed once; the stand-in tus reads ends when the store is done', async () => {
    const request = new PassThrough();
    const body = new TusRequestBody(request);
    expect(body.claim()).toBe(request);
    expect(body.claim()).toBeUndefined();
    const reader = body.standIn.getReader();
    const read = reader.read();
    body.done();
    expect(await read).toEqual({ done: true, value: undefined });
    body.done(); // twice: no throw
  });
});

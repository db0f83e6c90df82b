import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { TusHttpError } from './tusHttpError';
import { TusRequestBody, requestChunks } from './tusRequestBody';

const KiB = 1024;

async function collect(chunks: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

const connectionReset = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });

describe('requestChunks', () => {
  test('every chunk of a body that ends, in order', async () => {
    const body = new PassThrough();
    const bytes = randomBytes(300 * KiB);
    const read = collect(requestChunks(body, new AbortController().signal, bytes.length));
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
      const read = collect(requestChunks(body, new AbortController().signal, 1e9));
      body.write(bytes);
      await new Promise((resolve) => setImmediate(resolve));
      goAway(body);
      expect((await read).equals(bytes)).toBe(true);
    }
  });

  test('any other failure of the body rejects, after the bytes received before it', async () => {
    const body = new PassThrough();
    const seen: number[] = [];
    const read = (async () => {
      for await (const chunk of requestChunks(body, new AbortController().signal, 1e9))
        seen.push(chunk.length);
    })();
    body.write(randomBytes(10 * KiB));
    await new Promise((resolve) => setImmediate(resolve));
    body.destroy(new Error('Parse Error: Invalid character in chunk size'));
    await expect(read).rejects.toThrow('Parse Error');
    expect(seen).toEqual([10 * KiB]);
  });

  test('stop ends a read that waits on a silent client; the request is left as it is (not destroyed)', async () => {
    const body = new PassThrough();
    const stop = new AbortController();
    const read = collect(requestChunks(body, stop.signal, 1e9));
    body.write(Buffer.from('first bytes'));
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    expect((await read).toString()).toBe('first bytes');
    expect(body.destroyed).toBe(false);
    expect(body.listenerCount('data')).toBe(0);
  });

  test('more bytes than maxBytes: 413 before the chunk crossing it is given', async () => {
    const body = new PassThrough();
    const seen: number[] = [];
    const read = (async () => {
      for await (const chunk of requestChunks(body, new AbortController().signal, 100))
        seen.push(chunk.length);
    })();
    body.write(Buffer.alloc(60));
    await new Promise((resolve) => setImmediate(resolve));
    body.write(Buffer.alloc(60));
    const error = await read.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(TusHttpError);
    expect((error as TusHttpError).status_code).toBe(413);
    expect(seen).toEqual([60]);
  });

  test('back-pressure: the request is paused once a MiB waits, and flows again as it is taken', async () => {
    const body = new PassThrough({ highWaterMark: 16 * KiB });
    const chunks = requestChunks(body, new AbortController().signal, 1e9)[Symbol.asyncIterator]();
    const first = chunks.next();
    for (let i = 0; i < 20; i += 1) body.write(Buffer.alloc(64 * KiB, i));
    await new Promise((resolve) => setImmediate(resolve));
    expect((await first).done).toBe(false);
    expect(body.isPaused()).toBe(true);
    let taken = 1;
    while (taken < 20) {
      const next = await chunks.next();
      expect(next.done).toBe(false);
      expect((next.value as Buffer)[0]).toBe(taken);
      taken += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(body.isPaused()).toBe(false);
    body.end();
    expect((await chunks.next()).done).toBe(true);
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

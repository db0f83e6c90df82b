import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobTooLargeError } from './blobStore';
import { HashingLimiter } from './hashingLimiter';

const sink = () =>
  new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });

describe('HashingLimiter', () => {
  test('counts and hashes what passes through', async () => {
    const limiter = new HashingLimiter(10);
    await pipeline(Readable.from([Buffer.from('brain'), Buffer.from('scan')]), limiter, sink());
    expect(limiter.result()).toEqual({
      size: 9,
      sha256: createHash('sha256').update('brainscan').digest('hex'),
    });
  });

  test('fails before forwarding the first byte over the limit', async () => {
    const limiter = new HashingLimiter(6);
    const forwarded: Buffer[] = [];
    const collect = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        forwarded.push(chunk);
        callback();
      },
    });
    const done = pipeline(Readable.from([Buffer.from('brain'), Buffer.from('scan')]), limiter, collect);
    await expect(done).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(Buffer.concat(forwarded).toString()).toBe('brain');
  });

  test('has no result before the stream ended', () => {
    expect(() => new HashingLimiter().result()).toThrow('before the stream ended');
  });
});

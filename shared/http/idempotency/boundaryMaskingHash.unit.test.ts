import { randomBytes } from 'node:crypto';
import { BoundaryMaskingHash, multipartDelimiter } from './boundaryMaskingHash';

function form(boundary: string, file: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="bio"\r\n\r\nhello\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="avatar"; filename="a.png"\r\n`),
    Buffer.from('Content-Type: image/png\r\n\r\n'),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

/** Hashes `body` fed in chunks of the given sizes (cycled). */
function digest(boundary: string, body: Buffer, chunkSizes: number[]): string {
  const hash = new BoundaryMaskingHash(multipartDelimiter(`multipart/form-data; boundary=${boundary}`));
  for (let at = 0, i = 0; at < body.length; i++) {
    const size = chunkSizes[i % chunkSizes.length]!;
    hash.update(body.subarray(at, at + size));
    at += size;
  }
  return hash.digest().toString('hex');
}

const file = randomBytes(5000);

test('the same form with another boundary hashes the same, however it is chunked', () => {
  const a = digest('----formdata-undici-0123456789', form('----formdata-undici-0123456789', file), [65536]);
  for (const chunks of [[1], [7], [13, 2, 40], [31, 1]]) {
    expect(digest('XyZ', form('XyZ', file), chunks)).toBe(a);
    expect(
      digest('----formdata-undici-0123456789', form('----formdata-undici-0123456789', file), chunks),
    ).toBe(a);
  }
});

test('any other byte changes the hash', () => {
  const changed = Buffer.from(file);
  changed[2500] = (changed[2500]! + 1) % 256;
  expect(digest('b', form('b', changed), [100])).not.toBe(digest('b', form('b', file), [100]));
  expect(digest('b', form('b', file.subarray(1)), [100])).not.toBe(digest('b', form('b', file), [100]));
});

test('without a multipart boundary the bytes are hashed as they are', () => {
  const hash = new BoundaryMaskingHash(multipartDelimiter('application/octet-stream'));
  hash.update(Buffer.from('--abc'));
  const plain = new BoundaryMaskingHash(undefined);
  plain.update(Buffer.from('--abc'));
  expect(hash.digest()).toEqual(plain.digest());
});

test('the delimiter is read from plain and quoted boundary parameters', () => {
  expect(multipartDelimiter('multipart/form-data; boundary=abc')?.toString()).toBe('--abc');
  expect(multipartDelimiter('multipart/form-data; charset=utf-8; boundary="a b:c"')?.toString()).toBe(
    '--a b:c',
  );
  expect(multipartDelimiter('multipart/form-data')).toBeUndefined();
  expect(multipartDelimiter(undefined)).toBeUndefined();
});

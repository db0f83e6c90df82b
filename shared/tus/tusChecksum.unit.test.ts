import { createHash } from 'node:crypto';
import { parseUploadChecksum } from './tusChecksum';
import { tusBlobKey, tusOwnedKeys, tusUploadIdOfKey } from './tusKeys';

const ID = '0b6f1c52-5d0e-4a39-9d0e-2b1f4c7a9e11';

describe('Upload-Checksum', () => {
  test('absent: undefined; "<algorithm> <base64>": the digest to expect', () => {
    expect(parseUploadChecksum(undefined)).toBeUndefined();
    const digest = createHash('sha256').update('abc').digest();
    expect(parseUploadChecksum(`sha256 ${digest.toString('base64')}`)).toEqual({
      algorithm: 'sha256',
      expected: digest,
    });
    expect(parseUploadChecksum(`SHA1 ${createHash('sha1').update('').digest('base64')}`)).toMatchObject({
      algorithm: 'sha1',
    });
  });

  test('malformed or an algorithm not offered: a message', () => {
    expect(parseUploadChecksum('sha256')).toEqual(expect.stringContaining('<algorithm> <base64 digest>'));
    expect(parseUploadChecksum('sha256 not base64!')).toEqual(expect.any(String));
    expect(parseUploadChecksum('crc32 AAAA')).toEqual(expect.stringContaining('sha256'));
  });
});

describe('tus keys', () => {
  test('an upload owns its blob key and the S3 sidecars; nothing else maps back to it', () => {
    expect(tusBlobKey(ID)).toBe(`uploads/tus/${ID}`);
    for (const key of tusOwnedKeys(ID)) expect(tusUploadIdOfKey(key)).toBe(ID);
    expect(tusUploadIdOfKey(`uploads/${ID}.nii`)).toBeUndefined();
    expect(tusUploadIdOfKey(`uploads/tus/${ID}.other`)).toBeUndefined();
    expect(tusUploadIdOfKey('uploads/tus/../x')).toBeUndefined();
  });
});

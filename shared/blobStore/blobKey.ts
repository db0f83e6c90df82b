/** Keys are relative, '/'-separated segments of [A-Za-z0-9._-]; anything else could escape a root directory. */
const SEGMENT = /^[A-Za-z0-9._-]+$/;
const MAX_KEY_LENGTH = 1024;

export class InvalidBlobKeyError extends Error {
  constructor(readonly key: string) {
    super(`invalid blob key ${JSON.stringify(key)}`);
    this.name = 'InvalidBlobKeyError';
  }
}

export function assertValidBlobKey(key: string): void {
  if (!isValidBlobKey(key)) throw new InvalidBlobKeyError(key);
}

export function isValidBlobKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return false;
  return key.split('/').every((segment) => SEGMENT.test(segment) && segment !== '.' && segment !== '..');
}

import { createPasswordHasher } from './passwords';

test('scrypt hashes verify the right password only, and a malformed hash never verifies', async () => {
  const hasher = createPasswordHasher(10);
  const hash = await hasher.hash('correct horse');
  expect(hash).not.toContain('correct horse');
  expect(await hasher.verify(hash, 'correct horse')).toBe(true);
  expect(await hasher.verify(hash, 'wrong horse')).toBe(false);
  expect(await hasher.verify('bm90IGEgaGFzaA==', 'correct horse')).toBe(false);
  expect(await hasher.hash('correct horse')).not.toBe(hash); // salted
});

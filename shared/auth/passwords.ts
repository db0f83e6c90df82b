import * as scryptModule from 'scrypt-kdf';

// scrypt-kdf's typings declare named exports, but at run time the module only default-exports a
// class with static kdf/verify: take whichever is there.
const scrypt: typeof scryptModule =
  (scryptModule as { default?: typeof scryptModule }).default ?? scryptModule;

/**
 * Passwords are hashed with scrypt (scrypt-kdf's self-describing format, base64). logN is the cost:
 * 15 (32 MiB, tens of ms) in production; tests may lower it through configuration.
 */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

export function createPasswordHasher(logN: number): PasswordHasher {
  return {
    async hash(password) {
      const key = await scrypt.kdf(password, { logN, r: 8, p: 1 });
      return Buffer.from(key).toString('base64');
    },
    async verify(hash, password) {
      try {
        return await scrypt.verify(Buffer.from(hash, 'base64'), password);
      } catch {
        return false; // a malformed stored hash never authenticates
      }
    },
  };
}

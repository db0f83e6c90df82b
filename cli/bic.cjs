#!/usr/bin/env node
// The `bic` executable (package.json "bin"). In a checkout it runs the TypeScript source through
// tsx (a dev dependency that `npm ci` installs), so it never runs stale compiled code; where tsx
// is absent (an install without dev dependencies) it runs the compiled dist/cli/main.js from
// `npm run build`. Everything is found relative to this file, never the working directory, so a
// global install (`npm install -g`, `npm link`) works anywhere: tsx reads this package's
// tsconfig.json, not whatever tsconfig.json the directory `bic` runs in has.
'use strict';
const path = require('node:path');

function load() {
  try {
    require.resolve('tsx/cjs/api');
  } catch {
    const compiled = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
    if (require('node:fs').existsSync(compiled)) return require(compiled);
    process.stderr.write('bic: neither tsx (npm ci) nor a build (npm run build) is installed\n');
    process.exit(1);
  }
  process.env.TSX_TSCONFIG_PATH = path.join(__dirname, '..', 'tsconfig.json');
  require('tsx/cjs/api').register();
  return require(path.join(__dirname, 'main.ts'));
}

load()
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });

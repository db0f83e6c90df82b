#!/usr/bin/env node
// The build's dist/package.json: the same subpath imports as the root package.json ("#shared/…"),
// pointing at the compiled .js files, so `node dist/…` resolves them as tsx and jest resolve the
// TypeScript sources.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const { imports } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const compiled = Object.fromEntries(
  Object.entries(imports).map(([name, target]) => [name, target.replace(/\.ts$/, '.js')]),
);
const distPackage = { private: true, type: 'commonjs', imports: compiled };
fs.writeFileSync(path.join(root, 'dist', 'package.json'), `${JSON.stringify(distPackage, null, 2)}\n`);

#!/usr/bin/env node
// The build's SQL files: tsc compiles only TypeScript, so every .sql file under shared/ and
// services/ (migrations read at run time, beside the module that runs them) is copied to the same
// place under dist/.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
for (const top of ['shared', 'services'])
  for (const file of fs.readdirSync(path.join(root, top), { recursive: true }))
    if (String(file).endsWith('.sql')) {
      const target = path.join(root, 'dist', top, String(file));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(path.join(root, top, String(file)), target);
    }

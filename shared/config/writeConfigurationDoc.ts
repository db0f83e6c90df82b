import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { formatConfigurationDoc } from './formatConfigurationDoc';

/** `npm run docs:config` (from source, with tsx): regenerates docs/configuration.md's table from the schema. */
const target = path.resolve(__dirname, '../../docs/configuration.md');
const current = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
writeFileSync(target, formatConfigurationDoc(current, target));
process.stdout.write(`wrote ${target}\n`);

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildServiceApiDocument, serialiseApiDocument } from './apiDocument';

/** `npm run openapi` (from source, with tsx): regenerates shared/apiContract/openapi.json from the route specs. */
const target = path.resolve(__dirname, '../../shared/apiContract/openapi.json');
writeFileSync(target, serialiseApiDocument(buildServiceApiDocument()));
process.stdout.write(`wrote ${target}\n`);

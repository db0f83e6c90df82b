import { readFileSync } from 'node:fs';
import path from 'node:path';
import { envSchema } from '#shared/config/configSchema';
import { configurationTable } from '#shared/config/configurationDoc';
import { formatConfigurationDoc } from '#shared/config/formatConfigurationDoc';

const DOC = path.resolve(__dirname, '../../docs/configuration.md');

test('docs/configuration.md is what the schema generates (run `npm run docs:config` after changing it)', () => {
  const committed = readFileSync(DOC, 'utf8');
  expect(committed).toBe(formatConfigurationDoc(committed, DOC));
});

test('every variable has a row with its type, default and meaning', () => {
  const table = configurationTable();
  for (const name of Object.keys(envSchema.shape)) expect(table).toContain(`| \`${name}\` |`);
  expect(table).toContain('| `PORT` | integer 0–65535 | `8000` |');
});

import type { Command } from 'commander';
import type { Json } from '#cli/api/resources';
import { addListCommand, boolean, listRunner, positiveInt } from './listing';
import type { RunCommand } from './runCommand';
import { visibilityName } from './visibilityOptions';

const field =
  (...path: string[]) =>
  (row: Json): unknown =>
    path.reduce<unknown>((value, key) => (value as Json | null | undefined)?.[key], row);

const count = (key: string) => (row: Json) => (Array.isArray(row[key]) ? row[key].length : undefined);

/** `categories|species|atlases list`; brains are in brainCommands.ts. */
export function catalogueCommands(program: Command, run: RunCommand): void {
  const listing = listRunner(run);
  addListCommand(
    program.command('categories').description('categories of the catalogue'),
    {
      path: '/api/categories/',
      filters: [{ flag: 'name', param: 'name', description: 'exact name (case-insensitive)' }],
      columns: [
        { header: 'id', value: field('id') },
        { header: 'name', value: field('name') },
        { header: 'brains', value: field('brains_count') },
        { header: 'atlases', value: field('atlases_count') },
        { header: 'description', value: field('description') },
      ],
    },
    listing,
  );

  addListCommand(
    program.command('species').description('species of the catalogue'),
    {
      path: '/api/species/',
      filters: [
        { flag: 'category', param: 'category', description: 'category name or id' },
        { flag: 'scientific-name', param: 'scientific_name', description: 'exact scientific name' },
      ],
      columns: [
        { header: 'id', value: field('id') },
        { header: 'name', value: field('name') },
        { header: 'scientific name', value: field('scientific_name') },
        { header: 'category', value: field('category_name') },
        { header: 'atlases', value: count('atlases') },
        { header: 'brains', value: count('brains') },
      ],
    },
    listing,
  );

  addListCommand(
    program.command('atlases').description('atlases of the catalogue'),
    {
      path: '/api/atlases/',
      filters: [
        { flag: 'species', param: 'species', description: 'species (scientific name or id)' },
        { flag: 'official', param: 'is_official', description: 'true or false', parse: boolean },
        { flag: 'verified', param: 'verified', description: 'true or false', parse: boolean },
        { flag: 'name', param: 'name', description: 'exact name (case-insensitive)' },
      ],
      columns: [
        { header: 'id', value: field('id') },
        { header: 'name', value: field('name') },
        { header: 'slug', value: field('slug') },
        { header: 'species', value: field('species', 'scientific_name') },
        { header: 'version', value: field('version') },
        { header: 'official', value: field('is_official') },
        { header: 'verified', value: field('verified') },
        { header: 'brains', value: field('brains_count') },
      ],
    },
    listing,
  );
}

const BRAIN_COLUMNS = [
  { header: 'id', value: field('id') },
  { header: 'readable id', value: field('readable_id') },
  { header: 'name', value: field('name') },
  { header: 'atlas', value: field('atlas', 'slug') },
  { header: 'species', value: field('species', 'scientific_name') },
  { header: 'verified', value: field('verified') },
  { header: 'MB', value: field('file_size_mb') },
  { header: 'uploaded', value: field('date_uploaded') },
];

const VISIBILITY_COLUMN = { header: 'visibility', value: field('visibility') };

/**
 * The brains table. Its rows are already wider than 80 columns, so `visibility` is shown only when
 * a row on the page is not public (a catalogue of public brains reads as before; --json has it always).
 */
export const brainColumns = (rows: readonly Json[]) =>
  rows.some((row) => row.visibility !== undefined && row.visibility !== 'public')
    ? [...BRAIN_COLUMNS.slice(0, 3), VISIBILITY_COLUMN, ...BRAIN_COLUMNS.slice(3)]
    : BRAIN_COLUMNS;

export const brainFilters = [
  { flag: 'species', param: 'species', description: 'species scientific name' },
  { flag: 'verified', param: 'verified', description: 'true or false', parse: boolean },
  { flag: 'uploader', param: 'uploader', description: 'uploader user id', parse: positiveInt },
  { flag: 'atlas', param: 'atlas', description: 'atlas id or slug' },
  { flag: 'category', param: 'category', description: 'category name or id' },
  {
    flag: 'visibility',
    param: 'visibility',
    description: 'public, private or embargoed',
    parse: visibilityName,
  },
];

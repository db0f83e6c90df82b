import type { Command } from 'commander';
import type { FileUpload, Json } from '#cli/api/resources';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { printJson } from '#cli/output/printJson';
import { printProcessed } from '#cli/output/printProcessed';
import { flattenRecord, renderRecord } from '#cli/output/table';
import { downloadFile } from '#cli/transfer/downloadFile';
import { uploadFile } from '#cli/transfer/uploadFile';
import { waitForUpload } from '#cli/transfer/waitForUpload';
import { brainColumns, brainFilters } from './catalogueCommands';
import { addListCommand, listRunner, positiveInt } from './listing';
import type { RunCommand } from './runCommand';
import { describe, shareCommands } from './shareCommands';
import { embargoDate } from './visibilityOptions';

interface CreateOptions {
  name: string;
  file: string;
  atlas?: string;
  category?: string;
  description?: string;
  color?: string;
  reference?: boolean;
  extraLink?: string;
  website?: string;
  private?: boolean;
  embargoUntil?: string;
  wait?: boolean;
  timeout: string;
  json?: boolean;
}

export const brainPath = (key: string): string => `/api/brains/${encodeURIComponent(key)}/`;

export function brainCommands(program: Command, run: RunCommand): void {
  const brains = program.command('brains').description('brain records');
  addListCommand(
    brains,
    {
      path: '/api/brains/',
      filters: brainFilters,
      columns: brainColumns,
      fixedQuery: { shape: 'a' },
      facets: ['species', 'atlas', 'category', 'verified'],
    },
    listRunner(run),
  );

  brains
    .command('show')
    .description('one brain, by id or readable id')
    .argument('<key>', 'numeric id or readable id')
    .option('--as-of <time>', 'as it was then: an ISO 8601 time (2026-01-31T12:00:00Z) or an event position')
    .option('--json', 'print the JSON')
    .action(
      run(async (ctx, opts: { json?: boolean; asOf?: string }, key = '') => {
        const response = await ctx.api.send({
          method: 'GET',
          path: brainPath(key),
          query: { shape: 'a', as_of: opts.asOf },
        });
        const brain = (await response.json()) as Json;
        const position = response.headers.get('x-as-of-position');
        if (opts.asOf !== undefined && position)
          ctx.notice(`as of ${opts.asOf} (event position ${position})`);
        if (opts.json) return printJson(ctx, brain);
        ctx.print(renderRecord(flattenRecord(brain)));
      }),
    );

  brains
    .command('preview')
    .description("save a brain's preview image (PNG of its middle slices, made when its file was processed)")
    .argument('<key>', 'numeric id or readable id')
    .option('-o, --output <file>', 'where to write (default: <key>.png)')
    .option('--force', 'overwrite an existing file')
    .action(
      run(async (ctx, opts: { output?: string; force?: boolean }, key = '') => {
        const result = await downloadFile(ctx, `${brainPath(key)}preview/`, {
          output: opts.output ?? `${key.replace(/[^\w.-]+/g, '_')}.png`,
          force: opts.force,
          fallbackName: `brain-${key}.png`,
        });
        ctx.print(`Saved ${result.file} (${result.bytes} bytes, PNG)`);
      }),
    );

  brains
    .command('create')
    .description('create a brain with its scan file (streamed, with progress on a terminal)')
    .requiredOption('--name <name>', 'name of the brain')
    .requiredOption('--file <path>', 'the scan: .nii, .nii.gz, .zarr (zip), .tif, .tiff')
    .option('--atlas <id>', 'atlas id (species and category follow from it)', positiveInt)
    .option('--category <id>', 'category id (when there is no atlas)', positiveInt)
    .option('--description <text>', 'description')
    .option('--color <hex>', '#rrggbb')
    .option('--reference', 'mark as the reference brain of its atlas')
    .option('--extra-link <url>', 'a related link')
    .option('--website <url>', 'a website')
    .option('--private', 'only you, staff and collaborators you share it with see it')
    .option(
      '--embargo-until <date>',
      'private until then (YYYY-MM-DD: midnight UTC), public after',
      embargoDate,
    )
    .option('--wait', 'follow processing of the file until completed or failed')
    .option('--timeout <seconds>', 'how long --wait waits', positiveInt, '600')
    .option('--json', 'print the JSON')
    .action(run(createBrain));

  shareCommands(brains, run);
}

async function createBrain(ctx: CliContext, opts: CreateOptions): Promise<void> {
  requireToken(ctx);
  if (opts.atlas === undefined && opts.category === undefined)
    throw new CliError('give --atlas or --category', ExitCode.usage);
  if (opts.private && opts.embargoUntil !== undefined)
    throw new CliError('give --private or --embargo-until, not both', ExitCode.usage);
  const brain = await uploadFile<Json>(ctx, '/api/brains/', opts.file, {
    name: opts.name,
    atlas: opts.atlas,
    category: opts.category,
    description: opts.description,
    color: opts.color,
    is_reference: opts.reference ? 'true' : undefined,
    extra_link: opts.extraLink,
    website: opts.website,
    visibility: opts.private ? 'private' : opts.embargoUntil !== undefined ? 'embargoed' : undefined,
    embargo_until: opts.embargoUntil,
  });
  if (!opts.wait) {
    if (opts.json) return printJson(ctx, brain);
    const visibility =
      brain.visibility === undefined || brain.visibility === 'public' ? '' : `, ${describe(brain)}`;
    return ctx.print(`Created brain ${String(brain.id)} (${String(brain.readable_id)})${visibility}`);
  }
  ctx.notice(`created brain ${String(brain.id)} (${String(brain.readable_id)}); waiting for processing`);
  const upload = await waitForUpload(ctx, await uploadOfBrain(ctx, brain), Number(opts.timeout));
  printProcessed(ctx, upload, opts.json === true);
}

/** The file upload a brain create recorded: its uploader's upload associated with the brain. */
async function uploadOfBrain(ctx: CliContext, brain: Json): Promise<string> {
  const uploads = await ctx.api.json<FileUpload[]>({
    method: 'GET',
    path: '/api/file-uploads/',
    query: { associated_brain: String(brain.id) },
  });
  const upload = uploads[0];
  if (!upload) throw new CliError(`no file upload found for brain ${String(brain.id)}`, ExitCode.failure);
  return upload.id;
}

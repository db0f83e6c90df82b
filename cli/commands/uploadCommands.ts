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
import { brainPath } from './brainCommands';
import { addListCommand, listRunner, positiveInt } from './listing';
import type { RunCommand } from './runCommand';

interface UploadOptions {
  name?: string;
  wait?: boolean;
  timeout: string;
  json?: boolean;
}

export function uploadCommands(program: Command, run: RunCommand): void {
  program
    .command('upload')
    .description('upload scan files (streamed from disk, with progress on a terminal)')
    .argument('<files...>', '.nii, .nii.gz, .zarr (zip), .tif, .tiff')
    .option('--name <name>', 'name of the upload (default: the file name; only with one file)')
    .option('--wait', 'follow processing until completed or failed and print the metadata')
    .option('--timeout <seconds>', 'how long --wait waits for each file', positiveInt, '600')
    .option('--json', 'print the JSON')
    .action(run(upload));

  const uploads = program.command('uploads').description('your file uploads and their processing');
  addListCommand(
    uploads,
    {
      path: '/api/file-uploads/',
      filters: [
        { flag: 'status', param: 'status', description: 'uploaded, processing, completed or failed' },
        { flag: 'brain', param: 'associated_brain', description: 'a brain id, or "none"' },
      ],
      columns: [
        { header: 'id', value: (u) => u.id },
        { header: 'name', value: (u) => u.name },
        { header: 'status', value: (u) => u.status },
        { header: 'MB', value: (u) => u.file_size_mb },
        { header: 'brain', value: (u) => (u.associated_brain as Json | null)?.readable_id },
        { header: 'uploaded', value: (u) => u.date_uploaded },
      ],
    },
    listRunner(run),
  );
  uploads
    .command('show')
    .description('one upload: status, processing times and metadata')
    .argument('<id>', 'the upload id')
    .option('--json', 'print the JSON')
    .action(
      run(async (ctx, opts: { json?: boolean }, id = '') => {
        const upload = await ctx.api.json<Json>({
          method: 'GET',
          path: `/api/file-uploads/${encodeURIComponent(id)}/`,
        });
        if (opts.json) return printJson(ctx, upload);
        ctx.print(renderRecord(flattenRecord(upload)));
      }),
    );

  program
    .command('download')
    .description("download a brain's file (resumes an interrupted download)")
    .argument('<key>', 'brain id or readable id')
    .option('-o, --output <file>', 'where to write (default: the name the server gives)')
    .option('--force', 'overwrite an existing file')
    .action(
      run(async (ctx, opts: { output?: string; force?: boolean }, key = '') => {
        const result = await downloadFile(ctx, `${brainPath(key)}file/`, {
          ...opts,
          fallbackName: `brain-${key}`,
        });
        const resumed = result.resumedFrom > 0 ? `, resumed at byte ${result.resumedFrom}` : '';
        const verified = result.verified ? ', SHA-256 verified' : '';
        ctx.print(`Saved ${result.file} (${result.bytes} bytes${resumed}${verified})`);
      }),
    );
}

async function upload(ctx: CliContext, opts: UploadOptions, ...files: string[]): Promise<void> {
  requireToken(ctx);
  if (opts.name !== undefined && files.length > 1)
    throw new CliError('--name names one upload: give one file with it', ExitCode.usage);
  for (const file of files) {
    const created = await uploadFile<FileUpload>(ctx, '/api/file-uploads/', file, { name: opts.name });
    if (!opts.wait) {
      if (opts.json) printJson(ctx, created);
      else ctx.print(`Uploaded ${file} as ${created.id} (${created.status})`);
      continue;
    }
    ctx.notice(`uploaded ${file} as ${created.id}; waiting for processing`);
    printProcessed(ctx, await waitForUpload(ctx, created.id, Number(opts.timeout)), opts.json === true);
  }
}

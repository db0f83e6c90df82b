import type { Command } from 'commander';
import path from 'node:path';
import type { Json } from '#cli/api/resources';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { printJson } from '#cli/output/printJson';
import { printProcessed } from '#cli/output/printProcessed';
import { flattenRecord, renderRecord } from '#cli/output/table';
import { downloadFile } from '#cli/transfer/downloadFile';
import { formatBytes } from '#cli/output/formatBytes';
import { INTERRUPTED_EXIT_CODE, interruptSignal } from '#cli/transfer/interruptSignal';
import { type UploadResult, uploadFiles } from '#cli/transfer/uploadFiles';
import { waitForUpload } from '#cli/transfer/waitForUpload';
import { brainPath } from './brainCommands';
import { addListCommand, listRunner, positiveInt } from './listing';
import type { RunCommand } from './runCommand';

interface UploadOptions {
  name?: string;
  wait?: boolean;
  timeout: string;
  jobs: string;
  json?: boolean;
}

export function uploadCommands(program: Command, run: RunCommand): void {
  program
    .command('upload')
    .description(
      'upload scan files, resumable (tus): run the same command again after Ctrl-C or a failure to continue',
    )
    .argument('<files...>', '.nii, .nii.gz, .zarr (zip), .tif, .tiff')
    .option('--name <name>', 'name of the upload (default: the file name; only with one file)')
    .option('--jobs <n>', 'files uploaded at once', positiveInt, '3')
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
  const unique = [...new Map(files.map((file) => [path.resolve(file), file])).values()];
  const interrupt = interruptSignal();
  const started = Date.now();
  const waits: Promise<CliError | undefined>[] = [];
  let results: UploadResult[];
  try {
    results = await uploadFiles(
      ctx,
      unique.map((file) => ({ file, name: opts.name })),
      {
        jobs: Number(opts.jobs),
        signal: interrupt.signal,
        onResult(result) {
          if (!result.ok) return;
          const { upload: created, file } = result;
          if (!opts.wait) {
            if (opts.json) printJson(ctx, created);
            else ctx.print(`Uploaded ${file} as ${created.id} (${created.status})${resumed(result)}`);
            return;
          }
          ctx.notice(`uploaded ${file} as ${created.id}${resumed(result)}; waiting for processing`);
          waits.push(
            waitForUpload(ctx, created.id, Number(opts.timeout)).then(
              (processed) => void printProcessed(ctx, processed, opts.json === true),
              (error: unknown) =>
                error instanceof CliError ? error : new CliError(String(error), ExitCode.failure),
            ),
          );
        },
      },
    );
  } finally {
    interrupt.dispose();
  }
  const failures: [string, CliError][] = results.flatMap((r) =>
    r.ok ? [] : [[r.file, r.error] as [string, CliError]],
  );
  const waited = await Promise.all(waits);
  results.forEach((r) => {
    const error = r.ok ? waited.shift() : undefined;
    if (error) failures.push([r.file, error]);
  });
  if (interrupt.interrupted) {
    const left = results.filter((r) => !r.ok && r.interrupted).map((r) => r.file);
    ctx.notice(
      `interrupted: ${left.length} file(s) not finished (${left.join(', ')}); the parts sent are kept on the server: run the same \`bic upload\` again to resume`,
    );
    process.exitCode = INTERRUPTED_EXIT_CODE;
    return;
  }
  if (unique.length > 1) summarise(ctx, results, failures, Date.now() - started);
  const [first] = failures;
  if (!first) return;
  if (unique.length === 1) throw first[1];
  const codes = new Set(failures.map(([, error]) => error.exitCode));
  throw new CliError(
    `${failures.length} of ${unique.length} files failed`,
    codes.size === 1 ? first[1].exitCode : ExitCode.failure,
  );
}

const resumed = (result: UploadResult): string =>
  result.ok && result.resumedFrom > 0
    ? `, resumed at ${formatBytes(result.resumedFrom)} of ${formatBytes(result.size)}`
    : '';

/** The end of a run of several files: what went through, how fast, and each failure with its reason. */
function summarise(
  ctx: CliContext,
  results: readonly UploadResult[],
  failures: readonly [string, CliError][],
  elapsedMs: number,
): void {
  const ok = results.filter((r) => r.ok);
  const sent = ok.reduce((sum, r) => sum + (r.ok ? r.size - r.resumedFrom : 0), 0);
  const seconds = Math.max(elapsedMs, 1) / 1000;
  ctx.notice(
    `${ok.length} of ${results.length} files uploaded, ${formatBytes(sent)} sent in ${seconds.toFixed(1)} s (${formatBytes(sent / seconds)}/s)${failures.length ? `; ${failures.length} failed:` : ''}`,
  );
  for (const [file, error] of failures) ctx.notice(`  ${file}: ${error.message}`);
}

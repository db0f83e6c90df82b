import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { type CliContext, requireToken } from '#cli/context';
import { CliError, ExitCode } from '#cli/exitCodes';
import { formatBytes } from '#cli/output/formatBytes';
import { renderTable } from '#cli/output/table';
import { bidsPlan } from '#cli/import/bidsPlan';
import { serverCatalogue } from '#cli/import/catalogue';
import { folderPlan } from '#cli/import/folderPlan';
import type { ImportPlan, PlanIssue } from '#cli/import/importPlan';
import { manifestPlan } from '#cli/import/manifestPlan';
import { runImport } from '#cli/import/runImport';
import type { RunCommand } from './runCommand';
import { embargoDate, visibilityName } from './visibilityOptions';

interface ImportOptions {
  manifest?: string;
  atlas?: string;
  category?: string;
  species?: string;
  description?: string;
  visibility?: string;
  private?: boolean;
  embargoUntil?: string;
  recursive: boolean;
  jobs: number;
  dryRun?: boolean;
  json?: boolean;
}

const MAX_JOBS = 32;

const jobCount = (raw: string): number => {
  if (!/^[1-9][0-9]*$/.test(raw) || Number(raw) > MAX_JOBS)
    throw new InvalidArgumentError(`a whole number from 1 to ${MAX_JOBS}`);
  return Number(raw);
};

const IMPORT_HELP = `
PATH is a folder of scans (.nii, .nii.gz, .zarr zip, .tif, .tiff; one brain each, named after the
file), a BIDS dataset (a folder with dataset_description.json: one brain per NIfTI image, named by
its entities, its JSON sidecar merged into the upload's metadata, species from participants.tsv),
or a manifest (--manifest brains.csv, or PATH ending in .csv) with the columns
file,name,atlas,category,species,description,is_reference,visibility,embargo_until,extra_link,website,color
(file relative to the manifest's folder; atlas by id or slug, category by id or name; blank cells take the flags).
Everything is checked before anything is sent: every problem is listed, and nothing is sent while any remains.

Running the same import again skips what it already created (the state is kept in the config
directory; each create carries an Idempotency-Key from the file's SHA-256 and path, so a run killed
halfway and run again makes exactly one brain per scan).
Files over 32 MiB go through tus, resumable (BIC_IMPORT_TUS_ABOVE_MB sets the size), then become brains.`;

export function importCommands(program: Command, run: RunCommand): void {
  program
    .command('import')
    .description('import a folder of scans, a manifest or a BIDS dataset: one brain per scan')
    .argument('[path]', 'the folder, BIDS dataset or manifest (.csv)')
    .option('--manifest <file>', 'a CSV manifest (one row per brain)')
    .option('--atlas <atlas>', 'atlas id or slug (species and category follow from it)')
    .option('--category <category>', 'category id or name (when there is no atlas)')
    .option(
      '--species <name>',
      'scientific name; picks its atlas when it has exactly one (BIDS: unless participants.tsv says)',
    )
    .option('--description <text>', 'description of every brain (a manifest row may give its own)')
    .option('--visibility <visibility>', 'public, private or embargoed', visibilityName)
    .option('--private', 'same as --visibility private')
    .option(
      '--embargo-until <date>',
      'embargoed until then (YYYY-MM-DD: midnight UTC), public after',
      embargoDate,
    )
    .option('--no-recursive', 'a folder: only the files directly in it')
    .option('--jobs <n>', `uploads at once (1-${MAX_JOBS})`, jobCount, 4)
    .option('--dry-run', 'check everything and print the plan; send nothing')
    .option('--json', 'print the outcome of every scan as JSON instead of the summary table')
    .addHelpText('after', IMPORT_HELP)
    .action(run(importCommand));
}

async function importCommand(ctx: CliContext, opts: ImportOptions, target?: string): Promise<void> {
  if (opts.private && opts.visibility !== undefined && opts.visibility !== 'private')
    throw new CliError('give --private or --visibility, not both', ExitCode.usage);
  if (
    opts.embargoUntil !== undefined &&
    (opts.private || (opts.visibility && opts.visibility !== 'embargoed'))
  )
    throw new CliError(
      `--embargo-until goes with --visibility embargoed, not ${opts.private ? '--private' : opts.visibility}`,
      ExitCode.usage,
    );
  if (opts.visibility === 'embargoed' && opts.embargoUntil === undefined)
    throw new CliError('--visibility embargoed needs --embargo-until', ExitCode.usage);
  if (opts.atlas !== undefined && opts.category !== undefined)
    throw new CliError(
      'give --atlas or --category, not both (an atlas places the brain in its category)',
      ExitCode.usage,
    );
  if (!opts.dryRun) requireToken(ctx);
  const plan = await planOf(ctx, opts, target);
  if (plan.issues.length > 0) {
    for (const issue of plan.issues) ctx.notice(describeIssue(issue));
    const where =
      plan.kind === 'manifest' ? 'the manifest' : plan.kind === 'bids' ? 'the dataset' : 'the folder';
    throw new CliError(
      `${plan.issues.length} problem${plan.issues.length === 1 ? '' : 's'} in ${where} (listed above): nothing was sent`,
      ExitCode.invalid,
    );
  }
  if (plan.scans.length === 0) throw new CliError(`no scans found in ${plan.root}`, ExitCode.failure);
  if (opts.dryRun) return printPlan(ctx, plan);
  await runImport(ctx, plan, { jobs: opts.jobs, json: opts.json === true });
}

async function planOf(ctx: CliContext, opts: ImportOptions, target: string | undefined): Promise<ImportPlan> {
  const catalogue = serverCatalogue(ctx.api);
  const defaults = {
    atlas: opts.atlas,
    category: opts.category,
    species: opts.species,
    description: opts.description,
    visibility: opts.private ? 'private' : opts.visibility,
    embargoUntil: opts.embargoUntil,
  };
  let manifest = opts.manifest;
  if (manifest === undefined && target !== undefined && target.toLowerCase().endsWith('.csv'))
    manifest = target;
  else if (manifest !== undefined && target !== undefined)
    throw new CliError('give a PATH or --manifest, not both', ExitCode.usage);
  if (manifest !== undefined) {
    let text: string;
    try {
      text = await readFile(manifest, 'utf8');
    } catch (error) {
      throw new CliError(`cannot read ${manifest}: ${(error as Error).message}`, ExitCode.failure);
    }
    return manifestPlan(manifest, text, defaults, catalogue);
  }
  if (target === undefined)
    throw new CliError('give a PATH (a folder or BIDS dataset) or --manifest', ExitCode.usage);
  const root = path.resolve(target);
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory())
    throw new CliError(`${target} is not a folder (a manifest ends in .csv)`, ExitCode.usage);
  const isBids = await stat(path.join(root, 'dataset_description.json')).then(
    (s) => s.isFile(),
    () => false,
  );
  return isBids
    ? bidsPlan(root, defaults, catalogue)
    : folderPlan(root, { ...defaults, recursive: opts.recursive }, catalogue);
}

export function describeIssue(issue: PlanIssue): string {
  const where = [issue.row > 0 ? `row ${issue.row}` : undefined, issue.file].filter(Boolean).join(' ');
  return `${where ? `${where}, ` : ''}${issue.column}: ${issue.message}`;
}

function printPlan(ctx: CliContext, plan: ImportPlan): void {
  ctx.print(
    renderTable(plan.scans, [
      { header: 'file', value: (s) => s.relativePath },
      { header: 'name', value: (s) => s.fields.name },
      { header: 'atlas', value: (s) => s.fields.atlas },
      { header: 'category', value: (s) => s.fields.category },
      { header: 'size', value: (s) => formatBytes(s.size) },
      { header: 'sidecar', value: (s) => (s.sidecar ? `${Object.keys(s.sidecar).length} keys` : '') },
    ]),
  );
  const bytes = plan.scans.reduce((sum, s) => sum + s.size, 0);
  ctx.print(`${plan.scans.length} scans, ${formatBytes(bytes)} (${plan.kind}; dry run: nothing sent)`);
}

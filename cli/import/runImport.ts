import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { CliContext } from '#cli/context';
import { CliError, ExitCode, type ExitCodeValue } from '#cli/exitCodes';
import { formatBytes } from '#cli/output/formatBytes';
import { type OverallProgress, formatSeconds, overallProgress } from '#cli/output/overallProgress';
import { printJson } from '#cli/output/printJson';
import { renderTable } from '#cli/output/table';
import type { TransferProgress } from '#cli/output/transferProgress';
import type { ImportPlan, PlannedScan } from './importPlan';
import { ImportState, fileSha256, scanKey } from './importState';
import { type LargeTransfer, largeTransfer, tusThreshold } from './largeTransfer';
import { sendCreate } from './sendCreate';

/** Files up to this size are read into memory once (hash and body); larger ones are streamed. */
const SMALL_FILE_BYTES = 4 * 1024 * 1024;

export interface ImportOutcome {
  readonly file: string;
  readonly status: 'created' | 'skipped' | 'failed';
  readonly bytes: number;
  readonly name?: string;
  readonly id?: number;
  readonly readable_id?: string;
  /** created: the server replayed an earlier run's create; skipped: found in the state file. */
  readonly replayed?: boolean;
  readonly error?: string;
  readonly exitCode?: ExitCodeValue;
  /** From the start of this file's work to its brain's answer. */
  readonly ms: number;
}

export interface RunOptions {
  readonly jobs: number;
  readonly json: boolean;
}

/**
 * Imports a validated plan: `jobs` scans at once, each skipped when the state file has it (by
 * path, size and mtime, else by its key), else created with the Idempotency-Key its key gives and
 * recorded. Ends with the summary table, and fails listing every scan that failed and why.
 */
export async function runImport(
  ctx: CliContext,
  plan: ImportPlan,
  options: RunOptions,
): Promise<ImportOutcome[]> {
  const started = Date.now();
  const me = await ctx.api.json<{ id: number }>({ method: 'GET', path: '/api/auth/me/' });
  const state = await ImportState.open(ctx.store.dir, ctx.server, me.id);
  const threshold = tusThreshold(ctx.env);
  // tus is asked for (OPTIONS) only when a large file is to be sent: a run that skips all sends nothing.
  let probe: Promise<LargeTransfer | undefined> | undefined;
  const large = () => (probe ??= largeTransfer(ctx, me.id));
  const progress = overallProgress({ interactive: ctx.interactive, label: plan.scans[0]?.relativePath });
  for (const scan of plan.scans) progress.add(scan.relativePath, scan.size);
  const outcomes: ImportOutcome[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < plan.scans.length; index = next++) {
      const scan = plan.scans[index]!;
      const outcome = await importOne(
        ctx,
        plan,
        scan,
        state,
        progress,
        scan.size > threshold ? large : undefined,
      );
      outcomes[index] = outcome;
      progress.finish(scan.relativePath, outcome.status !== 'failed');
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.jobs, Math.max(plan.scans.length, 1)) }, worker));
  } finally {
    progress.stop();
    await state.close();
  }
  report(ctx, outcomes, Date.now() - started, options.json);
  const failed = outcomes.filter((o) => o.status === 'failed');
  if (failed.length > 0) {
    for (const outcome of failed) ctx.notice(`failed: ${outcome.file}: ${outcome.error ?? 'unknown error'}`);
    const codes = new Set(failed.map((o) => o.exitCode ?? ExitCode.failure));
    throw new CliError(
      `${failed.length} of ${outcomes.length} scans failed (listed above); run the same import again to retry them`,
      codes.size === 1 ? [...codes][0]! : ExitCode.failure,
    );
  }
  return outcomes;
}

async function importOne(
  ctx: CliContext,
  plan: ImportPlan,
  scan: PlannedScan,
  state: ImportState,
  progress: OverallProgress,
  large: (() => Promise<LargeTransfer | undefined>) | undefined,
): Promise<ImportOutcome> {
  const started = Date.now();
  const base = { file: scan.relativePath, name: scan.fields.name, bytes: scan.size };
  const known = state.doneByFile(plan.identity, scan.relativePath, scan.size, scan.mtimeMs);
  if (known) return { ...base, status: 'skipped', id: known.brain_id, readable_id: known.readable_id, ms: 0 };
  try {
    // A small file is read once: hashed, then sent from memory.
    const bytes = scan.size <= SMALL_FILE_BYTES ? await readFile(scan.file) : undefined;
    const sha256 = bytes ? createHash('sha256').update(bytes).digest('hex') : await fileSha256(scan.file);
    const key = scanKey(plan.identity, scan.relativePath, sha256);
    const record = {
      key,
      identity: plan.identity,
      path: scan.relativePath,
      size: scan.size,
      mtime_ms: scan.mtimeMs,
    };
    const done = state.get(key);
    if (done?.brain_id !== undefined) {
      await state.record({ ...done, ...record, at: new Date().toISOString() }); // this mtime: no hashing next time
      return {
        ...base,
        status: 'skipped',
        id: done.brain_id,
        readable_id: done.readable_id,
        ms: Date.now() - started,
      };
    }
    let upload = done?.upload;
    const tus = upload === undefined && large ? await large() : undefined;
    if (tus) {
      upload = await tus(scan.file, scan.fields.name ?? scan.relativePath, (bytes) =>
        progress.update(scan.relativePath, bytes),
      );
      await state.record({ ...record, upload, at: new Date().toISOString() });
    }
    const brain = await sendCreate(
      ctx.api,
      scan,
      key,
      transferProgressOf(progress, scan.relativePath),
      upload,
      (line) => ctx.notice(line),
      upload === undefined ? bytes : undefined,
    );
    await state.record({
      ...record,
      upload,
      brain_id: brain.id,
      readable_id: brain.readable_id,
      at: new Date().toISOString(),
    });
    return {
      ...base,
      status: 'created',
      id: brain.id,
      readable_id: brain.readable_id,
      replayed: brain.replayed,
      ms: Date.now() - started,
    };
  } catch (error) {
    const cliError = error instanceof CliError ? error : undefined;
    return {
      ...base,
      status: 'failed',
      error: cliError?.message ?? (error instanceof Error ? error.message : String(error)),
      exitCode: cliError?.exitCode ?? ExitCode.failure,
      ms: Date.now() - started,
    };
  }
}

/** One file's bytes as the overall progress counts them (a retry starts again from 0). */
function transferProgressOf(progress: OverallProgress, key: string): TransferProgress {
  let sent = 0;
  return {
    start(_total, done = 0) {
      sent = done;
      progress.update(key, sent);
    },
    advance(bytes) {
      sent += bytes;
      progress.update(key, sent);
    },
    stop: () => undefined,
  };
}

function report(ctx: CliContext, outcomes: readonly ImportOutcome[], ms: number, json: boolean): void {
  if (json) return printJson(ctx, outcomes);
  const rows = (['created', 'skipped', 'failed'] as const).map((status) => {
    const these = outcomes.filter((o) => o.status === status);
    return { status, files: these.length, bytes: these.reduce((sum, o) => sum + o.bytes, 0) };
  });
  const total = outcomes.reduce((sum, o) => sum + o.bytes, 0);
  ctx.print(
    renderTable(
      [...rows, { status: 'total', files: outcomes.length, bytes: total }],
      [
        { header: 'result', value: (r) => (r.status === 'skipped' ? 'skipped (already there)' : r.status) },
        { header: 'files', value: (r) => String(r.files) },
        { header: 'bytes', value: (r) => formatBytes(r.bytes) },
      ],
    ),
  );
  const replayed = outcomes.filter((o) => o.replayed).length;
  const seconds = ms / 1000;
  const created = rows[0]!.files;
  ctx.print(
    `time ${formatSeconds(seconds)} (${seconds.toFixed(1)} s)${created > 0 ? `, ${(created / Math.max(seconds, 0.001)).toFixed(1)} brains/s` : ''}${replayed > 0 ? `; ${replayed} created by an earlier run (replayed)` : ''}`,
  );
}

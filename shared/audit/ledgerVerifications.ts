/**
 * The record of `verify-ledger` runs, for the ledger metrics and for the auditor who asks when the
 * chain was last proven. It lives in its own schema, `audit`, beside the read models but outside
 * `rm`, so a rebuild (which drops `rm`) keeps it. Created by the tool on its first run; readers
 * treat a missing table as "never verified".
 */
import { isAbsentRelation, type Queryable } from './ledgerHead';

export const LEDGER_VERIFICATIONS = 'audit.ledger_verifications';

export interface LedgerVerificationRecord {
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly ok: boolean;
  readonly eventsChecked: number;
  /** Where the chain first broke (a position, or "seq n" for a ledger row with no event). */
  readonly firstBadPosition: string | null;
  readonly message: string;
}

/** duplicate_schema / unique_violation: another run created it at the same moment. */
const CREATED_CONCURRENTLY = new Set(['42P06', '23505', '42P07']);

async function ensureTable(db: Queryable): Promise<void> {
  const create = async (sql: string): Promise<void> => {
    await db.query(sql).catch((error: { code?: string }) => {
      if (!CREATED_CONCURRENTLY.has(error.code ?? '')) throw error;
    });
  };
  await create('CREATE SCHEMA IF NOT EXISTS audit');
  await create(`
    CREATE TABLE IF NOT EXISTS ${LEDGER_VERIFICATIONS} (
      id                 bigserial PRIMARY KEY,
      started_at         timestamptz NOT NULL,
      finished_at        timestamptz NOT NULL,
      ok                 boolean NOT NULL,
      events_checked     bigint NOT NULL,
      first_bad_position text,
      message            text NOT NULL
    )`);
}

export async function recordLedgerVerification(db: Queryable, run: LedgerVerificationRecord): Promise<void> {
  await ensureTable(db);
  await db.query(
    `INSERT INTO ${LEDGER_VERIFICATIONS}
       (started_at, finished_at, ok, events_checked, first_bad_position, message)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [run.startedAt, run.finishedAt, run.ok, run.eventsChecked, run.firstBadPosition, run.message],
  );
}

/** The latest run, or undefined when none was ever recorded. */
export async function lastLedgerVerification(db: Queryable): Promise<LedgerVerificationRecord | undefined> {
  try {
    const { rows } = await db.query<{
      started_at: Date;
      finished_at: Date;
      ok: boolean;
      events_checked: string;
      first_bad_position: string | null;
      message: string;
    }>(
      `SELECT started_at, finished_at, ok, events_checked, first_bad_position, message
         FROM ${LEDGER_VERIFICATIONS} ORDER BY id DESC LIMIT 1`,
    );
    const row = rows[0];
    return row
      ? {
          startedAt: row.started_at,
          finishedAt: row.finished_at,
          ok: row.ok,
          eventsChecked: Number(row.events_checked),
          firstBadPosition: row.first_bad_position,
          message: row.message,
        }
      : undefined;
  } catch (error) {
    if (isAbsentRelation(error)) return undefined;
    throw error;
  }
}

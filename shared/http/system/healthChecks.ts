import { type Static, Type } from '@sinclair/typebox';
import { StringEnum } from '#shared/views/stringEnum';
/** Resolves when the dependency answers; rejects (or times out) when it does not. */
export type HealthCheck = () => Promise<unknown>;

const HealthCheckResult = Type.Union([
  Type.Object({ status: Type.Literal('ok') }),
  Type.Object({ status: Type.Literal('failing'), reason: Type.String() }),
]);
export type HealthCheckResult = Static<typeof HealthCheckResult>;

/** The answer of /health/, and its schema in the API document (a failing check says why). */
export const HealthReport = Type.Object({
  status: StringEnum(['healthy', 'unhealthy']),
  checks: Type.Unsafe<Record<string, HealthCheckResult>>({
    type: 'object',
    additionalProperties: HealthCheckResult,
  }),
});
export type HealthReport = Static<typeof HealthReport>;

function withTimeout(check: HealthCheck, timeoutMs: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([Promise.resolve().then(check), timeout]).finally(() => clearTimeout(timer));
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs every check at once; healthy only when all pass. */
export async function runHealthChecks(
  checks: Readonly<Record<string, HealthCheck>>,
  timeoutMs: number,
): Promise<HealthReport> {
  const names = Object.keys(checks);
  const outcomes = await Promise.allSettled(names.map((name) => withTimeout(checks[name]!, timeoutMs)));
  const results: Record<string, HealthCheckResult> = {};
  let healthy = true;
  outcomes.forEach((outcome, i) => {
    if (outcome.status === 'fulfilled') results[names[i]!] = { status: 'ok' };
    else {
      healthy = false;
      results[names[i]!] = { status: 'failing', reason: reasonOf(outcome.reason) };
    }
  });
  return { status: healthy ? 'healthy' : 'unhealthy', checks: results };
}

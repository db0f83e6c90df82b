import { type BidsSidecar, parseSidecar } from '#shared/domain/uploads/sidecar';
import { unstorableTextErrors } from '#shared/http/storableText';

/**
 * A form's or a JSON body's `sidecar` into a sidecar, or its error into `errors.sidecar`; null when
 * not sent. Text PostgreSQL cannot store that only JSON escapes reveal ("\u0000") is refused here:
 * the read models keep the sidecar as jsonb.
 */
export function readSidecar(value: unknown, errors: Record<string, string[]>): BidsSidecar | null {
  if (value === undefined) return null;
  const parsed = parseSidecar(value);
  if ('error' in parsed) {
    errors.sidecar = [parsed.error];
    return null;
  }
  const unstorable = unstorableTextErrors(parsed.sidecar);
  if (unstorable) {
    errors.sidecar = Object.entries(unstorable).map(([at, problems]) => `${at}: ${problems.join(' ')}`);
    return null;
  }
  return parsed.sidecar;
}

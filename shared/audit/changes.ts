/**
 * `changes` of a history entry (decisions.md "Audit"): `{field: [before, after]}` for every field of
 * the resource's representation that differs between the representation right before an event and
 * right after it. A create lists every field with null before; a delete changes nothing ({}).
 */
import { isDeepStrictEqual } from 'node:util';

export type Representation = Readonly<Record<string, unknown>>;
export type Changes = Record<string, [unknown, unknown]>;

export function changesBetween(before: Representation | undefined, after: Representation | undefined): Changes {
  const changes: Changes = {};
  if (after === undefined) return changes;
  for (const [field, value] of Object.entries(after)) {
    const previous = before === undefined ? null : (before[field] ?? null);
    if (before === undefined || !isDeepStrictEqual(previous, value ?? null)) changes[field] = [previous, value ?? null];
  }
  if (before !== undefined)
    for (const [field, value] of Object.entries(before))
      if (!(field in after)) changes[field] = [value ?? null, null];
  return changes;
}

import { createHash } from 'node:crypto';

/**
 * A named statement: each connection plans it once, and PostgreSQL then reuses a generic plan when
 * it is no worse. The name is derived from the text (`prefix` says whose it is), so one name never
 * stands for two texts. Only for statements whose generic plan is as good as a custom one.
 */
export function namedStatement(
  prefix: string,
  text: string,
  values: unknown[],
): { name: string; text: string; values: unknown[] } {
  return { name: `${prefix}_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, values };
}

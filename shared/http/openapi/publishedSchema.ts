/**
 * JSON as the OpenAPI document shows it. TypeBox schemas carry symbol keys (Kind, Optional) that
 * never serialise, and write their options before `type`; hand-written schemas put `type` first.
 * Dropping the one and moving the other keeps the committed document the same whichever way a
 * schema was written.
 */
export function publishedSchema<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => publishedSchema(item)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  const ordered = 'type' in source ? ['type', ...keys.filter((key) => key !== 'type')] : keys;
  return Object.fromEntries(ordered.map((key) => [key, publishedSchema(source[key])])) as T;
}

/**
 * How ids arriving over HTTP are read: the one place that knows the database's integer range and
 * the canonical form of a UUID. Integer ids and filters are PostgreSQL `integer`: a value outside
 * its range would fail in the database (a 500), so it is turned away here first. Token and file
 * upload ids are UUIDs, stored and compared in lowercase: one written in capitals names the same
 * record.
 */
export const DATABASE_INTEGER_MIN = -2_147_483_648;
export const DATABASE_INTEGER_MAX = 2_147_483_647;

const DIGITS = /^[0-9]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a number fits an integer column. */
export function isDatabaseInteger(value: number): boolean {
  return Number.isInteger(value) && value >= DATABASE_INTEGER_MIN && value <= DATABASE_INTEGER_MAX;
}

/**
 * The record id that text in decimal digits names (a path segment, or a filter that takes an id or a
 * name); undefined when it names none: not digits, zero, or beyond the database's range.
 */
export function databaseIdOf(text: string): number | undefined {
  if (!DIGITS.test(text)) return undefined;
  const id = Number(text);
  return id >= 1 && id <= DATABASE_INTEGER_MAX ? id : undefined;
}

/** A UUID in its canonical (lowercase) form; undefined when the text is not a UUID. */
export function canonicalUuid(text: string): string | undefined {
  return UUID.test(text) ? text.toLowerCase() : undefined;
}

/** Path parameters with every UUID in canonical form (other values are left as they are). */
export function withCanonicalUuids(params: Record<string, string>): Record<string, string> {
  const canonical: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) canonical[name] = canonicalUuid(value) ?? value;
  return canonical;
}

type Schema = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Puts the values of a validated query or body that its schema declares as `format: "uuid"` in
 * canonical form, in place (nested properties and array items too).
 */
export function canonicaliseUuidFields(schema: Schema | undefined, data: unknown): void {
  if (!schema || !isObject(data)) return;
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, property] of Object.entries(properties)) {
    if (!isObject(property) || !Object.hasOwn(data, key)) continue;
    const value = data[key];
    if (property.format === 'uuid' && typeof value === 'string') data[key] = canonicalUuid(value) ?? value;
    else if (Array.isArray(value) && isObject(property.items)) {
      const items = property.items;
      value.forEach((item: unknown, index) => {
        if (items.format === 'uuid' && typeof item === 'string') value[index] = canonicalUuid(item) ?? item;
        else canonicaliseUuidFields(items, item);
      });
    } else canonicaliseUuidFields(property, value);
  }
}

import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';

/**
 * The schema, or null, written as `type: [<type>, 'null']` like the hand-written schemas of the
 * OpenAPI document (TypeBox's Union would publish an anyOf), which strictScalars reads to let a
 * null through.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const type: unknown = schema.type;
  if (typeof type !== 'string') throw new Error('Nullable needs a schema of one type.');
  // Only the string keys: the result is TypeBox's Unsafe kind, not the given schema's.
  return Type.Unsafe<Static<T> | null>({
    ...Object.fromEntries(Object.entries(schema)),
    type: [type, 'null'],
  });
}

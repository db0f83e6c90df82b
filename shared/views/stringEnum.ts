import { type TUnsafe, Type } from '@sinclair/typebox';

/**
 * One of a few strings, written as `{type: 'string', enum: [...]}` like the hand-written schemas
 * of the OpenAPI document (TypeBox's union of literals would publish an anyOf of consts).
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

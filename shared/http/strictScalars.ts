import type { FieldErrors } from '#shared/errors/httpErrors';
import { addFieldError } from './addFieldError';
import { DATABASE_INTEGER_MAX, DATABASE_INTEGER_MIN } from './ids';
import { wrongTypeMessage } from './validationMessages';

/**
 * What ajv's type coercion would wrongly accept, found before ajv runs (ajv coerces in place, so
 * afterwards the original value is gone): DRF's fields, not ajv's, decide what a value may be.
 * - a null where the schema does not allow it (ajv would make it "" / 0 / false);
 * - a boolean where a string or number is expected (a CharField refuses booleans; numbers are
 *   accepted as text);
 * - integer text that is not plain decimal digits: ajv takes "1e2", "0x10" and "1.0" for numbers;
 * - an integer beyond the database's integer (shared/http/ids): PostgreSQL would fail on it.
 */
export interface ScalarOffence {
  /** JSON pointer of the value, to drop ajv's own errors about it. */
  readonly pointer: string;
  readonly field: string;
  readonly message: string;
}

/** Optional sign and surrounding blanks, like Python's int() that DRF uses; nothing else. */
const INTEGER_TEXT = /^\s*[+-]?[0-9]+\s*$/;
/** Decimal notation with an optional exponent; no hex, no "Infinity", no "NaN". */
const NUMBER_TEXT = /^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$/;

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(schema: Schema): readonly string[] | undefined {
  if (typeof schema.type === 'string') return [schema.type];
  return Array.isArray(schema.type) ? (schema.type as string[]) : undefined;
}

/** Whether a schema accepts null; schemas that say nothing about types accept anything. */
export function allowsNull(schema: unknown): boolean {
  if (!isSchema(schema)) return true;
  const s = schema;
  if (
    s.type === undefined &&
    s.anyOf === undefined &&
    s.oneOf === undefined &&
    s.const === undefined &&
    s.enum === undefined
  )
    return true;
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) return true;
  if (s.const === null || (Array.isArray(s.enum) && s.enum.includes(null))) return true;
  const alternatives = [s.anyOf, s.oneOf].filter(Array.isArray).flat() as unknown[];
  return alternatives.some(allowsNull);
}

/**
 * The range an integer field may take: the database's integer (ids, filters) unless the schema says
 * `format: "int64"` (page numbers and sizes, which never reach an integer column).
 */
function integerRange(schema: Schema): readonly [number, number] {
  return schema.format === 'int64'
    ? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]
    : [DATABASE_INTEGER_MIN, DATABASE_INTEGER_MAX];
}

/** An integer outside its range, as DRF's min_value / max_value words it. */
function outOfRange(schema: Schema, value: unknown): string | undefined {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && INTEGER_TEXT.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isInteger(number)) return undefined;
  const [min, max] = integerRange(schema);
  if (number > max) return `Ensure this value is less than or equal to ${max}.`;
  if (number < min) return `Ensure this value is greater than or equal to ${min}.`;
  return undefined;
}

function scalarProblem(schema: Schema, value: unknown): string | undefined {
  if (value === null) return allowsNull(schema) ? undefined : 'This field may not be null.';
  const types = typesOf(schema);
  if (!types) return undefined;
  if (typeof value === 'boolean' && !types.includes('boolean')) return wrongTypeMessage(types, value);
  if (typeof value === 'number' && types.includes('integer')) return outOfRange(schema, value);
  if (typeof value !== 'string' || types.includes('string')) return undefined;
  if (types.includes('integer') && !INTEGER_TEXT.test(value)) return wrongTypeMessage(['integer'], value);
  if (types.includes('integer')) return outOfRange(schema, value);
  if (types.includes('number') && !types.includes('integer') && !NUMBER_TEXT.test(value))
    return wrongTypeMessage(['number'], value);
  return undefined;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

interface Place {
  readonly pointer: string;
  readonly field: string;
}

function child(place: Place, key: string): Place {
  return {
    pointer: `${place.pointer}/${escapePointer(key)}`,
    field: place.field === '' ? key : `${place.field}.${key}`,
  };
}

function check(schema: Schema, value: unknown, place: Place, form: boolean, out: ScalarOffence[]): void {
  // Forms and query strings: a repeated key is an array, and ajv unwraps a single item.
  const scalar = form && Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  const problem = place.pointer === '' ? undefined : scalarProblem(schema, scalar);
  if (problem) {
    out.push({ ...place, message: problem });
    return;
  }
  if (isSchema(schema.properties) && isSchema(value)) {
    for (const [key, propertySchema] of Object.entries(schema.properties)) {
      if (isSchema(propertySchema) && Object.hasOwn(value, key))
        check(propertySchema, value[key], child(place, key), form, out);
    }
  }
  if (isSchema(schema.items) && Array.isArray(value)) {
    const items = schema.items;
    value.forEach((item: unknown, index) => check(items, item, child(place, String(index)), form, out));
  }
}

/** Offences in `data` against `schema`'s declared (nested) properties and items. */
export function strictScalarOffences(schema: Schema, data: unknown, form: boolean): ScalarOffence[] {
  const out: ScalarOffence[] = [];
  check(schema, data, { pointer: '', field: '' }, form, out);
  return out;
}

/** The offences as field errors, and whether an ajv error (by instance path) is about one of them. */
export function offenceErrors(offences: readonly ScalarOffence[]): {
  fields: FieldErrors;
  covers: (instancePath: string) => boolean;
} {
  const fields: FieldErrors = {};
  for (const offence of offences) addFieldError(fields, offence.field, offence.message);
  const covers = (path: string) =>
    offences.some((o) => path === o.pointer || path.startsWith(`${o.pointer}/`));
  return { fields, covers };
}

import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FieldErrors } from '../errors/httpErrors';
import type { JsonSchema } from './routeSpec';
import { ERROR_MESSAGE_KEYWORD, toFieldErrors } from './validationMessages';

/** Validates (and coerces / fills defaults in place); returns field errors, or undefined when valid. */
export type Validator = (data: unknown) => FieldErrors | undefined;

type Coercion = boolean | 'array';

function createAjv(coerceTypes: Coercion): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    useDefaults: true,
    coerceTypes,
    removeAdditional: false,
    // OpenAPI annotations (example, discriminator...) must not break compilation.
    strict: false,
    verbose: true,
  });
  addFormats(ajv);
  // OpenAPI's file formats: the bytes are checked by the handler that streams them.
  ajv.addFormat('binary', true);
  ajv.addFormat('byte', true);
  ajv.addKeyword({ keyword: ERROR_MESSAGE_KEYWORD, schemaType: 'string' });
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

// One ajv per coercion mode for the whole process, one compiled function per schema object:
// compiling is the expensive part, and both apps of the all-in-one share route schemas.
const instances = new Map<Coercion, { ajv: Ajv2020; cache: WeakMap<JsonSchema, ValidateFunction> }>();

function compiled(schema: JsonSchema, coercion: Coercion): ValidateFunction {
  let instance = instances.get(coercion);
  if (!instance) {
    instance = { ajv: createAjv(coercion), cache: new WeakMap() };
    instances.set(coercion, instance);
  }
  let validate = instance.cache.get(schema);
  if (!validate) {
    validate = instance.ajv.compile(schema);
    instance.cache.set(schema, validate);
  }
  return validate;
}

function allowsNull(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return true;
  const s = schema as Record<string, unknown>;
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

function nonNullableProperties(schema: JsonSchema): string[] {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return [];
  return Object.entries(properties)
    .filter(([, s]) => !allowsNull(s))
    .map(([name]) => name);
}

/** Query strings and url-encoded forms: every value is text, so coerce (and unwrap 1-item arrays). */
export function compileFormValidator(schema: JsonSchema): Validator {
  const validate = compiled(schema, 'array');
  return (data) => (validate(data) ? undefined : toFieldErrors(validate.errors ?? []));
}

/**
 * JSON bodies: "5" is accepted for an integer like DRF does, but ajv would also coerce null to
 * "" / 0 / false, so a null in a field that does not allow it is reported before coercion.
 */
export function compileJsonValidator(schema: JsonSchema): Validator {
  const validate = compiled(schema, true);
  const nonNullable = nonNullableProperties(schema);
  return (data) => {
    const nulls = nullFields(data, nonNullable);
    if (nulls.length === 0) return validate(data) ? undefined : toFieldErrors(validate.errors ?? []);
    const record = data as Record<string, unknown>;
    for (const name of nulls) delete record[name];
    const errors = validate(data) ? {} : (toFieldErrors(validate.errors ?? []) ?? {});
    for (const name of nulls) errors[name] = ['This field may not be null.'];
    return errors;
  };
}

function nullFields(data: unknown, names: readonly string[]): string[] {
  if (names.length === 0 || typeof data !== 'object' || data === null || Array.isArray(data)) return [];
  const record = data as Record<string, unknown>;
  return names.filter((name) => record[name] === null);
}

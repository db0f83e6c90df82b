import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FieldErrors } from '#shared/errors/httpErrors';
import type { JsonSchema } from './routeSpec';
import { offenceErrors, strictScalarOffences } from './strictScalars';
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

/**
 * ajv with coercion, minus what coercion gets wrong (strictScalars): values ajv would coerce but
 * DRF refuses are reported with DRF's message, and ajv's errors about those values are dropped.
 */
function strictValidator(schema: JsonSchema, coercion: Coercion): Validator {
  const validate = compiled(schema, coercion);
  const form = coercion === 'array';
  return (data) => {
    const offences = strictScalarOffences(schema, data, form);
    if (offences.length === 0) return validate(data) ? undefined : toFieldErrors(validate.errors ?? []);
    const { fields, covers } = offenceErrors(offences);
    const others = validate(data) ? [] : (validate.errors ?? []).filter((e) => !covers(e.instancePath));
    return { ...toFieldErrors(others), ...fields };
  };
}

/**
 * Query strings and url-encoded forms: every value is text, so coerce (and unwrap 1-item arrays);
 * integers must be written in decimal digits.
 */
export function compileFormValidator(schema: JsonSchema): Validator {
  return strictValidator(schema, 'array');
}

/**
 * JSON bodies: "5" is accepted for an integer and 5 for a string like DRF does, but null is not
 * coerced to "" / 0 / false, nor a boolean to "false" or 0.
 */
export function compileJsonValidator(schema: JsonSchema): Validator {
  return strictValidator(schema, true);
}

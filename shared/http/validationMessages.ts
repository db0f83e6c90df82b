import type { ErrorObject } from 'ajv';
import type { FieldErrors } from '#shared/errors/httpErrors';
import { addFieldError } from './addFieldError';

/** Schema keyword holding a custom message for errors of that (sub)schema. */
export const ERROR_MESSAGE_KEYWORD = 'x-error-message';

const FORMAT_MESSAGES: Readonly<Record<string, string>> = {
  email: 'Enter a valid email address.',
  uri: 'Enter a valid URL.',
  url: 'Enter a valid URL.',
  uuid: 'Must be a valid UUID.',
  'date-time':
    'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
  date: 'Date has wrong format. Use one of these formats instead: YYYY-MM-DD.',
  time: 'Time has wrong format. Use one of these formats instead: hh:mm[:ss[.uuuuuu]].',
};

/** Python type names, as DRF's messages use them. */
function pyType(data: unknown): string {
  if (data === null) return 'NoneType';
  if (Array.isArray(data)) return 'list';
  if (typeof data === 'object') return 'dict';
  if (typeof data === 'number') return Number.isInteger(data) ? 'int' : 'float';
  if (typeof data === 'boolean') return 'bool';
  return 'str';
}

/** DRF's message for a value of the wrong type, given the JSON Schema types expected. */
export function wrongTypeMessage(expected: readonly string[], data: unknown): string {
  if (data === null) return 'This field may not be null.';
  switch (expected.filter((t) => t !== 'null')[0]) {
    case 'integer':
      return 'A valid integer is required.';
    case 'number':
      return 'A valid number is required.';
    case 'boolean':
      return 'Must be a valid boolean.';
    case 'string':
      return 'Not a valid string.';
    case 'array':
      return `Expected a list of items but got type "${pyType(data)}".`;
    case 'object':
      return `Invalid data. Expected a dictionary, but got ${pyType(data)}.`;
    default:
      return 'Invalid value.';
  }
}

function typeMessage(error: ErrorObject): string {
  return wrongTypeMessage(([] as string[]).concat(error.params.type as string | string[]), error.data);
}

function limit(error: ErrorObject): number {
  return error.params.limit as number;
}

/** DRF's wording for an ajv error (the field part is decided elsewhere). */
export function messageFor(error: ErrorObject): string {
  const custom: unknown = error.parentSchema?.[ERROR_MESSAGE_KEYWORD];
  if (typeof custom === 'string' && error.keyword !== 'required') return custom;
  switch (error.keyword) {
    case 'required':
    case 'dependentRequired':
      return 'This field is required.';
    case 'type':
      return typeMessage(error);
    case 'minLength':
      return error.data === ''
        ? 'This field may not be blank.'
        : `Ensure this field has at least ${limit(error)} characters.`;
    case 'maxLength':
      return `Ensure this field has no more than ${limit(error)} characters.`;
    case 'minimum':
      return `Ensure this value is greater than or equal to ${limit(error)}.`;
    case 'exclusiveMinimum':
      return `Ensure this value is greater than ${limit(error)}.`;
    case 'maximum':
      return `Ensure this value is less than or equal to ${limit(error)}.`;
    case 'exclusiveMaximum':
      return `Ensure this value is less than ${limit(error)}.`;
    case 'multipleOf':
      return `Ensure this value is a multiple of ${error.params.multipleOf as number}.`;
    case 'enum':
    case 'const':
      return `"${String(error.data)}" is not a valid choice.`;
    case 'format':
      return (
        (Object.hasOwn(FORMAT_MESSAGES, error.params.format as string)
          ? FORMAT_MESSAGES[error.params.format as string]
          : undefined) ?? 'Enter a valid value.'
      );
    case 'pattern':
      return 'This value does not match the required pattern.';
    case 'minItems':
      return Array.isArray(error.data) && error.data.length === 0 && limit(error) === 1
        ? 'This list may not be empty.'
        : `Ensure this field has at least ${limit(error)} elements.`;
    case 'maxItems':
      return `Ensure this field has no more than ${limit(error)} elements.`;
    case 'uniqueItems':
      return 'Items must be unique.';
    default:
      return 'Invalid value.';
  }
}

/** '/a/0/b' → 'a.0.b' (JSON pointer unescaped). */
function fieldName(pointer: string): string {
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function fieldOf(error: ErrorObject): string {
  const missing = error.params.missingProperty as string | undefined;
  if (missing !== undefined) return fieldName(`${error.instancePath}/${missing.replace(/^\./, '')}`);
  return error.instancePath === '' ? 'non_field_errors' : fieldName(error.instancePath);
}

/** anyOf/oneOf branches each fail separately; the user should see one message for the field. */
function insideAlternative(error: ErrorObject): boolean {
  return /\/(anyOf|oneOf)\/\d+\//.test(error.schemaPath);
}

/**
 * ajv errors → DRF field errors. additionalProperties errors are dropped: unknown fields are
 * ignored, not rejected (decisions.md "General"). Returns undefined when nothing is left.
 */
export function toFieldErrors(errors: readonly ErrorObject[]): FieldErrors | undefined {
  // A value of the wrong type also fails its enum/format/length checks: only the type error helps.
  const wrongType = new Set(
    errors.filter((e) => e.keyword === 'type' && !insideAlternative(e)).map((e) => e.instancePath),
  );
  const fields: FieldErrors = {};
  let any = false;
  for (const error of errors) {
    if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') continue;
    if (insideAlternative(error)) continue;
    if (
      error.keyword !== 'type' &&
      wrongType.has(error.instancePath) &&
      error.params.missingProperty === undefined
    )
      continue;
    const field = fieldOf(error);
    const message = messageFor(error);
    addFieldError(fields, field, message);
    any = true;
  }
  return any ? fields : undefined;
}

import type { FieldErrors } from '#shared/errors/httpErrors';

/**
 * Adds a message to a field's list. Field names come from clients (JSON keys, form and query
 * names): "__proto__" must become an ordinary own entry, never Object.prototype's.
 */
export function addFieldError(errors: FieldErrors, field: string, message: string): void {
  if (!Object.hasOwn(errors, field))
    Object.defineProperty(errors, field, { value: [], enumerable: true, writable: true, configurable: true });
  const list = errors[field]!;
  if (!list.includes(message)) list.push(message);
}

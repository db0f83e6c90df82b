import type { FieldErrors } from '#shared/errors/httpErrors';
import { unstorableTextProblem } from '#shared/infra/postgres/storableText';
import { addFieldError } from './addFieldError';

/** Where a value sits, as a linked list so deep nesting costs nothing until an error is named. */
interface Place {
  readonly key: string;
  readonly parent: Place | undefined;
}

function fieldOf(place: Place | undefined): string {
  const keys: string[] = [];
  for (let p = place; p; p = p.parent) keys.push(p.key);
  return keys.length === 0 ? 'non_field_errors' : keys.reverse().join('.');
}

/** Iterative: a 1 MiB body can nest half a million arrays deep, deeper than the call stack. */
function walk(root: unknown, errors: FieldErrors): void {
  const pending: { value: unknown; place: Place | undefined }[] = [{ value: root, place: undefined }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, place } = next;
    if (typeof value === 'string') {
      const problem = unstorableTextProblem(value);
      if (problem) addFieldError(errors, fieldOf(place), problem);
    } else if (typeof value === 'object' && value !== null) {
      // Own keys only, including a "__proto__" that JSON.parse creates as an ordinary own property.
      for (const key of Object.keys(value)) {
        const child = { key, parent: place };
        const problem = unstorableTextProblem(key);
        if (problem) addFieldError(errors, fieldOf(child), problem);
        pending.push({ value: (value as Record<string, unknown>)[key], place: child });
      }
    }
  }
}

/**
 * Field errors for every string (and object key) anywhere in `value` that cannot be stored, named
 * like validation errors ("a.0.b"); undefined when there is none. Applied to every client input:
 * query, path, JSON and url-encoded bodies (routeDispatcher) and multipart fields (uploads).
 */
export function unstorableTextErrors(value: unknown): FieldErrors | undefined {
  const errors: FieldErrors = {};
  walk(value, errors);
  return Object.keys(errors).length > 0 ? errors : undefined;
}

import { NotFoundError } from '#shared/errors/httpErrors';
import { isNumericKey } from '#shared/domain/naming/naming';
import { databaseIdOf } from '#shared/http/ids';

/**
 * The brain id a `/api/brains/{key}/` path names. A readable_id ends in "-<id>" (readableIdFor), so
 * no read model is needed; the caller checks the stream's readable_id really is the key.
 */
export function brainIdForKey(key: string): number {
  const digits = isNumericKey(key) ? key : /-(\d{1,10})$/.exec(key)?.[1];
  const id = digits === undefined ? undefined : databaseIdOf(digits);
  if (id === undefined) throw new NotFoundError();
  return id;
}

/** True when the key names the brain whose readable_id is given (ids always match their own key). */
export const keyMatches = (key: string, readableId: string): boolean =>
  isNumericKey(key) || key.toLowerCase() === readableId;

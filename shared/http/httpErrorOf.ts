import {
  ConflictError as DomainConflict,
  type DomainError,
  ForbiddenError,
  InvalidFieldError,
  NotFoundError as DomainNotFound,
} from '#shared/domain/domainErrors';
import {
  ConflictError,
  type HttpError,
  NotFoundError,
  PermissionDeniedError,
  ValidationError,
} from '#shared/errors/httpErrors';

/** The one mapping of the domain's refusals to HTTP: 400 with field errors, 403, 404, 409. */
export function httpErrorOf(error: DomainError): HttpError {
  if (error instanceof InvalidFieldError) return new ValidationError(error.fields);
  if (error instanceof ForbiddenError) return new PermissionDeniedError(error.detail);
  if (error instanceof DomainNotFound) return new NotFoundError(error.detail);
  if (error instanceof DomainConflict) return new ConflictError(error.detail);
  // A DomainError kind added without its status here: a server error says so.
  throw new Error(`no HTTP status for ${error.name}`, { cause: error });
}

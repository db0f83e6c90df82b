/**
 * What a decider or a command handler refuses, in the domain's words. They know nothing of HTTP:
 * shared/http/httpErrorOf maps each one, once, to a status and a DRF-shaped body.
 */
export type FieldErrors = Record<string, string[]>;

export abstract class DomainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Fields that break a rule: {"field": ["message"]}; cross-field rules use "non_field_errors". */
export class InvalidFieldError extends DomainError {
  constructor(readonly fields: FieldErrors) {
    super(
      Object.entries(fields)
        .map(([k, v]) => `${k}: ${v.join(' ')}`)
        .join('; '),
    );
  }
  static field(field: string, message: string): InvalidFieldError {
    return new InvalidFieldError({ [field]: [message] });
  }
}

/** The thing the command is about does not exist (or no longer does). */
export class NotFoundError extends DomainError {
  constructor(readonly detail = 'Not found.') {
    super(detail);
  }
}

/** The state changed under the command (a concurrent write, a stale revision, a claim held by another). */
export class ConflictError extends DomainError {
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** The actor may not do this. */
export class ForbiddenError extends DomainError {
  constructor(readonly detail = 'You do not have permission to perform this action.') {
    super(detail);
  }
}

import { HttpError } from '#shared/errors/httpErrors';

/** A 4xx raised by a library (body parsers) that has no dedicated class: {"detail": ...}. */
export class ClientError extends HttpError {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'ClientError';
  }
  body(): Record<string, unknown> {
    return { detail: this.detail };
  }
}

import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '#shared/errors/httpErrors';
import { ClientError } from './clientError';

interface ParserFailure {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly expose?: unknown;
  readonly message?: unknown;
}

function isParserFailure(error: unknown): error is Error & ParserFailure {
  return error instanceof Error && typeof (error as ParserFailure).type === 'string';
}

/**
 * body-parser reports with http-errors objects; turn them into our hierarchy so the one error
 * middleware answers them like every other error. Anything else is returned unchanged.
 */
export function fromBodyParserError(error: unknown, contentType: string): unknown {
  if (!isParserFailure(error)) return error;
  switch (error.type) {
    case 'entity.parse.failed':
      return new BadRequestError(`JSON parse error - ${error.message}`);
    case 'entity.too.large':
      return new PayloadTooLargeError();
    case 'parameters.too.many':
      return new PayloadTooLargeError('Too many parameters.');
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new UnsupportedMediaTypeError(contentType);
  }
  const status = typeof error.status === 'number' ? error.status : 500;
  if (status >= 400 && status < 500 && error.expose === true) return new ClientError(status, error.message);
  return error;
}

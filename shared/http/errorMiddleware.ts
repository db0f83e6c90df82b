import type { ErrorRequestHandler } from 'express';
import {
  databaseUnavailableError,
  isDatabaseUnavailable,
  isRelationMissing,
  readModelsNotReadyError,
} from '#shared/errors/databaseUnavailable';
import { HttpError } from '#shared/errors/httpErrors';
import type { Logger } from '#shared/logging/logger';
import { DomainError } from '#shared/domain/domainErrors';
import { fromBodyParserError } from './bodyParserError';
import { httpErrorOf } from './httpErrorOf';
import { wasCutForStalling } from './connectionTimeouts';
import { requestStateOf } from './requestState';
import { sendJson } from './sendJson';

/** Headers a handler may have set for a body that is now replaced by an error body. */
const BODY_HEADERS = ['Content-Disposition', 'Content-Encoding', 'Content-Range', 'ETag', 'Last-Modified'];

/**
 * The one place errors become responses: a domain error → its HTTP error (httpErrorOf), an
 * HttpError → its status, headers and DRF-shaped body; a database that cannot be reached → 503
 * with Retry-After (the request did not happen, retrying later may succeed); a table that does not
 * exist yet (a first start: requests arrive before the projector has installed the read models) →
 * 503 with a short Retry-After, logged with the statement's error so that a wrong name still shows;
 * anything else → 500 with the request id (never a stack trace, never HTML), stack logged.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  const respond: ErrorRequestHandler = (thrown: unknown, req, res) => {
    const requestId = requestStateOf(req)?.requestId ?? null;
    const parsed =
      thrown instanceof DomainError
        ? httpErrorOf(thrown)
        : fromBodyParserError(thrown, req.headers['content-type'] ?? '');
    const unavailable = !(parsed instanceof HttpError) && isDatabaseUnavailable(parsed);
    const missing = !unavailable && !(parsed instanceof HttpError) && isRelationMissing(parsed);
    const error = unavailable ? databaseUnavailableError() : missing ? readModelsNotReadyError() : parsed;
    // Answered 408 when its body stalled: that its reading fails next is expected.
    if (wasCutForStalling(res)) return;
    if (res.headersSent) {
      // Half a response is out (a failing download): all we can do is cut the connection.
      logger.error('error after response started', { request_id: requestId, error: thrown });
      res.destroy();
      return;
    }
    for (const name of BODY_HEADERS) res.removeHeader(name);
    if (error instanceof HttpError) {
      for (const [name, value] of Object.entries(error.headers())) res.setHeader(name, value);
      const body = error.status >= 500 ? { ...error.body(), request_id: requestId } : error.body();
      if (unavailable || missing)
        logger.warn(
          unavailable ? 'request failed: database unavailable' : 'request failed: a table it reads does not exist',
          { request_id: requestId, error: thrown instanceof Error ? thrown.message : String(thrown) },
        );
      else if (error.status >= 500) logger.error('request failed', { request_id: requestId, error });
      sendJson(res, error.status, body);
      return;
    }
    logger.error('unhandled error', {
      request_id: requestId,
      method: req.method,
      path: req.path,
      error: thrown,
    });
    sendJson(res, 500, { detail: 'A server error occurred.', request_id: requestId });
  };
  // Express would answer an error thrown here with its HTML page: never let one escape.
  return (thrown: unknown, req, res, next) => {
    try {
      respond(thrown, req, res, next);
    } catch (failure) {
      logger.error('error middleware failed', { error: failure });
      if (res.headersSent) res.destroy();
      else
        sendJson(res, 500, {
          detail: 'A server error occurred.',
          request_id: requestStateOf(req)?.requestId ?? null,
        });
    }
  };
}

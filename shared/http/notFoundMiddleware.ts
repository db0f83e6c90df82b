import type { RequestHandler } from 'express';
import { MethodNotAllowedError, NotFoundError } from '#shared/errors/httpErrors';
import type { RouteTable } from './routeTable';

/** Last route: 405 with Allow when the path exists for other methods (served by any app), else 404. */
export function notFoundMiddleware(known: RouteTable<unknown>): RequestHandler {
  return (req, _res, next) => {
    const allowed = known.allowedMethods(req.path);
    next(allowed.length > 0 ? new MethodNotAllowedError(req.method, allowed) : new NotFoundError());
  };
}

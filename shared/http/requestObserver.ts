import type { Request, Response } from 'express';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import { attachRequestState, type RequestState } from './requestState';
import { requestIdFrom } from './requestId';

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface RequestObserverOptions {
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Write one log line per request (default true). */
  readonly logRequests?: boolean;
}

/**
 * What the first middleware does to each request, as a plain call (createApiApp runs it with the
 * other front steps): assigns the request id, and when the response closes records the metrics and
 * writes one structured log line (route template, never the raw path, for the metrics label).
 */
export function requestObservation(options: RequestObserverOptions): (req: Request, res: Response) => void {
  const { metrics, logger } = options;
  const logRequests = (options.logRequests ?? true) && logger.isEnabled('info');

  const record = (req: Request, res: Response, state: RequestState): void => {
    const seconds = (performance.now() - state.startedAt) / 1000;
    const method = KNOWN_METHODS.has(req.method) ? req.method : 'OTHER';
    const status = res.statusCode;
    metrics.observeHttpRequest(method, state.route, status, seconds);
    if (!logRequests) return;
    logger.info('request', {
      request_id: state.requestId,
      method,
      route: state.route,
      path: req.path,
      status,
      duration_ms: Math.round(seconds * 100_000) / 100,
      user_id: state.principal?.userId ?? null,
      ...(res.writableFinished ? {} : { aborted: true }),
    });
  };

  return (req, res) => {
    const state = attachRequestState(req, requestIdFrom(req.headers['x-request-id']), performance.now());
    res.setHeader('X-Request-Id', state.requestId);
    res.on('close', () => record(req, res, state));
  };
}

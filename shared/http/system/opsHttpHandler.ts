import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from '#shared/metrics/metrics';
import { type HealthCheck, runHealthChecks } from './healthChecks';

const HEALTH_CHECK_TIMEOUT_MS = 2000;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
    })
    .end(text);
}

/**
 * The small HTTP surface of a service without an API (projector, processor, relay; no Express):
 * /health/ with the same checks and body as the APIs, /health/live/ for process supervisors,
 * /metrics/ for Prometheus.
 */
export function opsHttpHandler(
  metrics: Metrics,
  healthChecks: Readonly<Record<string, HealthCheck>>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    const fail = (error: unknown): void => {
      if (!res.headersSent) sendJson(res, 500, { detail: String(error) });
      else res.destroy();
    };
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return sendJson(res, 405, { detail: 'Method not allowed.' });
    switch (path) {
      case '/health/live':
        return sendJson(res, 200, { status: 'alive' });
      case '/health':
        return void runHealthChecks(healthChecks, HEALTH_CHECK_TIMEOUT_MS).then(
          (report) => sendJson(res, report.status === 'healthy' ? 200 : 503, report),
          fail,
        );
      case '/metrics':
        return void metrics
          .render()
          .then((text) => res.writeHead(200, { 'Content-Type': metrics.contentType }).end(text), fail);
      default:
        return sendJson(res, 404, { detail: 'Not found.' });
    }
  };
}

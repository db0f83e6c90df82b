import path from 'node:path';
import type { Request, RequestHandler, Response } from 'express';
import type { Metrics } from '#shared/metrics/metrics';
import { requestStateOf } from '#shared/http/requestState';
import { RouteTable } from '#shared/http/routeTable';
import { sendJson } from '#shared/http/sendJson';
import { SWAGGER_ASSETS, SWAGGER_DIR, docsHtml, docsInitializer } from './docsPage';
import { type HealthCheck, runHealthChecks } from './healthChecks';

export interface SystemRoutesOptions {
  readonly metrics: Metrics;
  readonly healthChecks: Readonly<Record<string, HealthCheck>>;
  readonly healthCheckTimeoutMs: number;
  /** Serialised OpenAPI document (built lazily, once). */
  readonly openApiJson: () => string;
  readonly title: string;
  readonly serve: { readonly health: boolean; readonly metrics: boolean; readonly docs: boolean };
}

type SystemHandler = (req: Request, res: Response, params: Record<string, string>) => Promise<void> | void;

export const HEALTH_PATH = '/health/';
export const LIVENESS_PATH = '/health/live/';
export const METRICS_PATH = '/metrics/';
export const SCHEMA_PATH = '/api/schema/';
export const DOCS_PATH = '/api/docs/';

function sendText(res: Response, contentType: string, text: string, cacheable = false): void {
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('Cache-Control', cacheable ? 'public, max-age=300' : 'no-store');
  res.end(text);
}

function sendAsset(res: Response, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    res.sendFile(path.join(SWAGGER_DIR, name), { maxAge: '1d', dotfiles: 'deny' }, (error) =>
      error ? reject(error) : resolve(),
    );
  });
}

function handlers(options: SystemRoutesOptions): [string, SystemHandler][] {
  const { metrics } = options;
  const routes: [string, SystemHandler][] = [];
  if (options.serve.health) {
    routes.push([
      HEALTH_PATH,
      async (_req, res) => {
        const report = await runHealthChecks(options.healthChecks, options.healthCheckTimeoutMs);
        res.setHeader('Cache-Control', 'no-store');
        sendJson(res, report.status === 'healthy' ? 200 : 503, report);
      },
    ]);
    // For process supervisors: answering at all proves the event loop runs. No dependency is
    // checked, so a database outage never gets a healthy process restarted.
    routes.push([
      LIVENESS_PATH,
      (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        sendJson(res, 200, { status: 'alive' });
      },
    ]);
  }
  if (options.serve.metrics) {
    routes.push([
      METRICS_PATH,
      async (_req, res) => sendText(res, metrics.contentType, await metrics.render()),
    ]);
  }
  if (options.serve.docs) {
    const initializer = docsInitializer(SCHEMA_PATH);
    const html = docsHtml(options.title, DOCS_PATH);
    routes.push([SCHEMA_PATH, (_req, res) => sendText(res, 'application/json', options.openApiJson())]);
    routes.push([DOCS_PATH, (_req, res) => sendText(res, 'text/html; charset=utf-8', html)]);
    routes.push([
      `${DOCS_PATH}{asset}`,
      async (_req, res, params) => {
        const asset = params.asset ?? '';
        if (asset === 'swagger-initializer.js')
          return sendText(res, 'text/javascript; charset=utf-8', initializer, true);
        if (!SWAGGER_ASSETS.has(asset)) return sendJson(res, 404, { detail: 'Not found.' });
        await sendAsset(res, asset);
      },
    ]);
  }
  return routes;
}

/** Paths of the system endpoints (GET only), for the 405 table of every app. */
export const SYSTEM_ROUTE_PATHS = [
  HEALTH_PATH,
  LIVENESS_PATH,
  METRICS_PATH,
  SCHEMA_PATH,
  DOCS_PATH,
  `${DOCS_PATH}{asset}`,
];

/** /health/, /metrics/, /api/schema/ and /api/docs/, each enabled separately. */
export function systemRoutes(options: SystemRoutesOptions): RequestHandler {
  const table = new RouteTable<SystemHandler>();
  for (const [template, handler] of handlers(options)) table.add('GET', template, handler);
  return (req, res, next) => {
    let match;
    try {
      match = table.match(req.method, req.path);
    } catch (error) {
      return next(error);
    }
    if (!match) return next();
    const state = requestStateOf(req);
    if (state) state.route = match.template;
    Promise.resolve(match.value(req, res, match.params)).catch(next);
  };
}

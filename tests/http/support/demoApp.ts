import type { ConsistencyGate } from '#shared/projections/consistencyGate';
import { type ApiAppOptions, createApiApp } from '#shared/http/createApiApp';
import { createLogger } from '#shared/logging/logger';
import { type Metrics, createMetrics } from '#shared/metrics/metrics';
import { type GlobalPosition, formatPosition } from '#shared/eventStore/eventStore';
import { demoRoutes, elsewhereRoutes, fakeAuthenticator } from './demoRoutes';
import { type Listening, listen } from './listen';

export interface DemoServer extends Listening {
  readonly logs: Record<string, unknown>[];
  readonly waits: string[];
  readonly metrics: Metrics;
}

/** Records what it was asked to wait for; always "reached". */
export function recordingGate(waits: string[]): ConsistencyGate {
  return {
    waitFor(position: GlobalPosition) {
      waits.push(formatPosition(position));
      return Promise.resolve(true);
    },
  };
}

export async function startDemo(overrides: Partial<ApiAppOptions> = {}): Promise<DemoServer> {
  const logs: Record<string, unknown>[] = [];
  const waits: string[] = [];
  const metrics = overrides.metrics ?? createMetrics('demo');
  const app = createApiApp({
    serviceName: 'demo',
    routes: demoRoutes,
    knownRoutes: [...demoRoutes, ...elsewhereRoutes],
    openApiRoutes: [...demoRoutes, ...elsewhereRoutes],
    authenticator: fakeAuthenticator,
    consistency: recordingGate(waits),
    metrics,
    logger: createLogger({
      service: 'demo',
      level: 'debug',
      sink: (line) => logs.push(JSON.parse(line) as Record<string, unknown>),
    }),
    jsonBodyLimitBytes: 1024,
    ...overrides,
  });
  const listening = await listen(app);
  return { ...listening, logs, waits, metrics };
}

import http from 'node:http';
import { loadConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logging/logger';
import { createMetrics } from '../../shared/metrics/metrics';
import { openInfrastructure } from '../../shared/runtime/openInfrastructure';
import { runUntilSignal } from '../../shared/runtime/runUntilSignal';
import { startProjector } from './startProjector';

/**
 * The projector alone (distributed mode). Several may run: one holds the leader lock and works,
 * the others wait to take over. Serves /metrics/ and /health/ on PORT for Prometheus.
 */
void runUntilSignal('projector', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'projector', level: config.logLevel });
  const metrics = createMetrics('projector');
  const infra = await openInfrastructure(config, logger);
  const runner = startProjector({ store: infra.store, pool: infra.readModels, metrics, logger });
  const server = http
    .createServer((req, res) => {
      if (req.url?.startsWith('/metrics')) {
        void metrics
          .render()
          .then((text) => res.writeHead(200, { 'Content-Type': metrics.contentType }).end(text));
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'healthy' }));
      }
    })
    .listen(config.port, config.host);
  return {
    logger,
    service: {
      async close() {
        server.close();
        await runner.stop();
        await infra.close();
      },
    },
  };
});

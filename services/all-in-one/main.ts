import { loadConfig } from '#shared/config/config';
import { createLogger } from '#shared/logging/logger';
import { runUntilSignal } from '#shared/platform/runUntilSignal';
import { startAllInOne } from './startAllInOne';

/** `npm start`: the whole service in one process. Configuration: docs/configuration.md. */
void runUntilSignal('catalogue', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'catalogue', level: config.logLevel });
  return { logger, service: await startAllInOne(config, logger) };
});

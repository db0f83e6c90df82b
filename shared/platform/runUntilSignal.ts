import type http from 'node:http';
import { closeHttpServer } from '#shared/http/createHttpServer';
import type { Logger } from '#shared/logging/logger';
import { type CloseStep, closeInOrder } from '#shared/runtime/closeInOrder';
import { tuneHeapGrowth } from '#shared/runtime/heapGrowth';
import { keepFreedHeapMemory } from '#shared/runtime/keepFreedHeapMemory';

/** Starts a service, and on SIGINT/SIGTERM closes it (flushing, stopping embedded PostgreSQL) before exiting. */
export async function runUntilSignal(
  name: string,
  start: () => Promise<{ logger: Logger; service: { close(): Promise<void> } }>,
): Promise<void> {
  tuneHeapGrowth();
  void keepFreedHeapMemory();
  let started: Awaited<ReturnType<typeof start>>;
  try {
    started = await start();
  } catch (error) {
    process.stderr.write(
      `${name} failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    started.logger.info('stopping', { signal });
    const force = setTimeout(() => {
      started.logger.error('stopping took longer than 15 s: exiting without finishing');
      process.exit(1);
    }, 15_000);
    force.unref();
    started.service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        started.logger.error('error while stopping', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * What a service's start gives runUntilSignal: its logger, and a shutdown that stops serving HTTP
 * first (requests in flight finish), then runs `steps` in order, then closes the infrastructure.
 */
export function servingUntilSignal(
  logger: Logger,
  server: http.Server,
  steps: readonly CloseStep[],
  infra: { close(): Promise<void> },
): { logger: Logger; service: { close(): Promise<void> } } {
  return {
    logger,
    service: {
      close: () =>
        closeInOrder(logger, [
          ['http server', () => closeHttpServer(server)],
          ...steps,
          ['infrastructure', () => infra.close()],
        ]),
    },
  };
}

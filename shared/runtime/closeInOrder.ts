import type { Logger } from '#shared/logging/logger';

/** One step of a shutdown: a name for the logs and the work. */
export type CloseStep = readonly [name: string, close: () => Promise<unknown>];

/** After this long a step still running is named in the log: what a stuck shutdown waits for. */
export const SLOW_CLOSE_STEP_MS = 5000;

/**
 * Runs a service's shutdown steps in order. Every step runs even when an earlier one failed (a
 * failure is logged with the step's name), so nothing is left open behind a failed step; the first
 * failure is thrown at the end. A step still running after `slowAfterMs` is logged as an error with
 * its name, once.
 */
export async function closeInOrder(
  logger: Logger,
  steps: readonly CloseStep[],
  slowAfterMs = SLOW_CLOSE_STEP_MS,
): Promise<void> {
  const failures: unknown[] = [];
  for (const [name, close] of steps) {
    const started = Date.now();
    const slow = setTimeout(
      () => logger.error('shutdown is waiting for a step', { step: name, waited_ms: Date.now() - started }),
      slowAfterMs,
    );
    try {
      await close();
    } catch (error) {
      logger.error('a shutdown step failed', { step: name, error });
      failures.push(error);
    } finally {
      clearTimeout(slow);
    }
  }
  if (failures.length > 0) throw failures[0];
}

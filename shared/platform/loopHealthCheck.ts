import type { HealthCheck } from '#shared/http/system/healthChecks';
import type { LoopStatus } from '#shared/runtime/supervisedLoop';

/** /health/ check of a supervised loop: failing while it retries after a failure, or once stopped. */
export function loopHealthCheck(status: () => LoopStatus): HealthCheck {
  return () => {
    const current = status();
    if (current.state === 'retrying')
      return Promise.reject(
        new Error(
          `not running since ${new Date(current.since).toISOString()} (${current.attempts} failed attempts): ${current.lastError ?? 'unknown error'}`,
        ),
      );
    if (current.state === 'stopped') return Promise.reject(new Error('stopped'));
    return Promise.resolve(current.state);
  };
}

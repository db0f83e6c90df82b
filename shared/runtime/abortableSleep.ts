/**
 * Resolves after `ms`, or at once when the signal aborts (never rejects: callers check the signal).
 * `unref`: the wait alone does not keep the process alive.
 */
export function abortableSleep(ms: number, signal: AbortSignal, { unref = false } = {}): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (unref) timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}

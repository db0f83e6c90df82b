import { inspect } from 'node:util';

export interface WaitOptions<T> {
  /** How long to keep trying (default 10 s: generous, the machines are shared and busy). */
  readonly timeoutMs?: number;
  /** Pause between two tries (default 25 ms). */
  readonly intervalMs?: number;
  /** When the value is the one awaited (default: anything but undefined, null and false). */
  readonly until?: (value: T) => boolean;
  /** More to say on a timeout (a child process's output, the log lines so far). */
  readonly detail?: () => string;
}

const present = (value: unknown): boolean => value !== undefined && value !== null && value !== false;

const shown = (value: unknown): string => {
  const text = value instanceof Error ? value.message : inspect(value, { depth: 4, breakLength: Infinity });
  return text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
};

/**
 * The one way tests wait for something that happens in the background: tries `probe` until its value
 * is the one awaited (`until`) and returns it. A probe that throws has not succeeded yet (an
 * expect() inside it is a fine probe). Past `timeoutMs` it fails saying what it awaited and the
 * last value seen, or the last error thrown.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 25, until = present, detail }: WaitOptions<T> = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: { value: T } | { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (until(value)) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) {
      const seen =
        last === undefined
          ? 'nothing'
          : 'error' in last
            ? `the error ${shown(last.error)}`
            : shown(last.value);
      const more = detail ? `\n${detail()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${seen}${more}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until `check` (assertions) passes; fails with what it awaited and the last assertion's message. */
export async function eventually(
  what: string,
  check: () => void | Promise<void>,
  options: Omit<WaitOptions<true>, 'until'> = {},
): Promise<void> {
  await waitFor(
    what,
    async () => {
      await check();
      return true as const;
    },
    options,
  );
}

import type { Reply } from '#shared/http/routeSpec';
import type { RequestIdentity } from './requestFingerprint';

/** One request carrying an Idempotency-Key. */
export interface IdempotentRequest {
  readonly key: string;
  /** Whose keys these are: "user:<id>", or "anonymous" (register, login) where the key alone counts. */
  readonly scope: string;
  readonly request: RequestIdentity;
}

export interface Idempotency {
  /**
   * Runs `handler` at most once per (scope, key) within the retention and records its reply; a
   * repeat of the same request gets that reply again (Idempotent-Replayed: true), another request
   * with the key gets 422. A handler that throws records nothing: a retry runs it again.
   */
  execute(request: IdempotentRequest, handler: () => Promise<Reply>): Promise<Reply>;
  /** Creates the table if needed; call once at start-up. */
  ensureSchema(): Promise<void>;
}

export interface IdempotencySettings {
  /** How long a key is remembered (24 h). */
  readonly retentionMs: number;
  /** How long a request waits for another with the same key to finish before answering 409. */
  readonly inProgressWaitMs: number;
  /**
   * TEST-ONLY fault hook (FAULT_INJECT_CRASH_AFTER_COMMIT): called once a request's effect and
   * its record are durable, before the response is sent.
   */
  readonly onCommitted?: () => void;
}

export const DEFAULT_IDEMPOTENCY_SETTINGS: IdempotencySettings = {
  retentionMs: 24 * 3_600_000,
  inProgressWaitMs: 10_000,
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

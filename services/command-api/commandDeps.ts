import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { PasswordHasher } from '#shared/auth/passwords';
import { createPasswordHasher } from '#shared/auth/passwords';
import { IdAllocator } from '#shared/commandHandling/allocateId';
import type { CommandContext } from '#shared/commandHandling/commandContext';
import type { Config } from '#shared/config/config';
import type { RequestContext } from '#shared/http/routeSpec';
import type { Logger } from '#shared/logging/logger';
import type { Infrastructure } from '#shared/platform/openInfrastructure';

/** Everything a command handler may use; wired once per process by createCommandDeps. */
export interface CommandDeps {
  readonly store: EventStore;
  /** Read models, for lookups only (who owns token X); decisions come from event streams. */
  readonly readModels: Pool;
  readonly blobs: BlobStore;
  readonly ids: IdAllocator;
  readonly passwords: PasswordHasher;
  readonly clock: () => Date;
  readonly loginTokenTtlMs: number;
  readonly maxAvatarBytes: number;
  /** Bound of an uploaded brain file (MAX_UPLOAD_BYTES), enforced while streaming. */
  readonly maxUploadBytes: number;
  /** Bound of an uploaded image's width × height (decompression bombs). */
  readonly maxImagePixels: number;
  /** For what a command cannot report to its caller (a failed compensation). */
  readonly logger: Logger;
}

/** `store` is the platform's instrumented store, so appends made by commands are counted. */
export function createCommandDeps(
  config: Config,
  infra: Infrastructure,
  store: EventStore,
  logger: Logger,
  clock: () => Date = () => new Date(),
): CommandDeps {
  return {
    store,
    readModels: infra.readModels,
    blobs: infra.blobs,
    ids: new IdAllocator(store),
    passwords: createPasswordHasher(config.passwordHashLogN),
    clock,
    loginTokenTtlMs: config.loginTokenTtlMs,
    maxAvatarBytes: config.maxAvatarBytes,
    maxUploadBytes: config.maxUploadBytes,
    maxImagePixels: config.maxImagePixels,
    logger,
  };
}

export function commandContext(ctx: RequestContext): CommandContext {
  const correlation = ctx.req.get('X-Correlation-Id');
  return {
    actor: ctx.principal ? String(ctx.principal.userId) : 'anonymous',
    requestId: ctx.requestId,
    correlationId: correlation && /^[\w.:-]{1,100}$/.test(correlation) ? correlation : ctx.requestId,
    causationId: null,
  };
}

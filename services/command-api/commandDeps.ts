import type { Pool } from 'pg';
import type { EventStore } from '../../shared/eventStore/eventStore';
import type { BlobStore } from '../../shared/blobStore/blobStore';
import type { PasswordHasher } from '../../shared/auth/passwords';
import type { IdAllocator } from '../../shared/commandHandling/allocateId';
import type { CommandContext } from '../../shared/commandHandling/commandContext';
import type { RequestContext } from '../../shared/http/routeSpec';

/** Everything a command handler may use; wired once in main.ts. */
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

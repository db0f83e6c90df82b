import { randomUUID } from 'node:crypto';
import type { EventStore } from '#shared/eventStore/eventStore';
import { type AccessTokenUsed, tokenUsageStreamName } from '#shared/domain/accounts/tokenUsage';
import { toNewEvents } from './handleCommand';

/**
 * Appends one AccessTokenUsed event to the token's own usage stream (any revision: uses never
 * conflict). The platform hands this to the token authenticator as its RecordTokenUse port.
 */
export function tokenUseRecorder(store: EventStore): (use: AccessTokenUsed['data']) => Promise<void> {
  return async (use) => {
    await store.appendToStream(
      tokenUsageStreamName(use.tokenId),
      toNewEvents([{ type: 'AccessTokenUsed', data: use }], {
        actor: String(use.userId),
        requestId: null,
        correlationId: randomUUID(),
        causationId: null,
      }),
      { expectedRevision: 'any' },
    );
  };
}

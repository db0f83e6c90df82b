/**
 * The caller's account through its history (GET /api/auth/me/ and its history): the user stream
 * folded with evolveUser, the account shown as currentUserJson, and each access token it issued as
 * tokenJson. A token event's changes are those of the token's representation, the others' those of
 * the account's; neither ever shows a password or token hash (the views have no such field).
 */
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import {
  type AccessTokenIssued,
  type AccessTokenRevoked,
  type UserEvent,
  type UserState,
  evolveUser,
  initialUserState,
} from '#shared/domain/accounts/events';
import { currentUserJson } from '#shared/views/userViews';
import { type TokenJson, tokenJson } from '#shared/views/tokenViews';
import type { Representation } from '#shared/audit/changes';
import { resourceOfEvent } from '#shared/audit/auditedEvent';
import type { TimelineStep } from './timeline';

/** What tokenJson shows that the user state does not keep (names and times). */
interface TokenFacts {
  readonly issued: AccessTokenIssued['data'];
  readonly revokedAt: string | null;
}

export interface AccountState {
  readonly user: UserState;
  readonly tokens: ReadonlyMap<string, TokenFacts>;
}

export const initialAccountState = (): AccountState => ({ user: initialUserState(), tokens: new Map() });

export function evolveAccount(state: AccountState, event: RecordedEvent): AccountState {
  const user = evolveUser(state.user, event as unknown as UserEvent);
  if (event.type === 'AccessTokenIssued') {
    const issued = event.data as AccessTokenIssued['data'];
    return { user, tokens: new Map(state.tokens).set(issued.tokenId, { issued, revokedAt: null }) };
  }
  if (event.type === 'AccessTokenRevoked') {
    const { tokenId, revokedAt } = event.data as AccessTokenRevoked['data'];
    const facts = state.tokens.get(tokenId);
    if (facts && facts.revokedAt === null)
      return { user, tokens: new Map(state.tokens).set(tokenId, { ...facts, revokedAt }) };
  }
  return { user, tokens: state.tokens };
}

/** The account as GET /api/auth/me/ shows it; undefined before registration. */
export function currentUserAt(state: AccountState, baseUrl: string) {
  const { user } = state;
  if (user.status !== 'registered') return undefined;
  return currentUserJson({ ...user, id: user.userId }, baseUrl);
}

/**
 * A token as the tokens routes show it. last_used_at is left null: token use is bookkeeping
 * (AccessTokenUsed, in its own stream) that no history lists, so it never differs between the
 * moments right before and right after an event of the account.
 */
export function tokenAt(state: AccountState, tokenId: string): TokenJson | undefined {
  const facts = state.tokens.get(tokenId);
  if (!facts) return undefined;
  const { issued, revokedAt } = facts;
  return tokenJson({
    id: issued.tokenId,
    name: issued.name,
    created_at: new Date(issued.createdAt),
    last_used_at: null,
    expires_at: issued.expiresAt === null ? null : new Date(issued.expiresAt),
    revoked_at: revokedAt === null ? null : new Date(revokedAt),
  });
}

/** The representation of the resource an event of the user stream belongs to: the token's or the account's. */
function representationFor(
  state: AccountState,
  event: RecordedEvent,
  baseUrl: string,
): Representation | undefined {
  const resource = resourceOfEvent(event);
  return resource?.type === 'token' ? tokenAt(state, resource.id) : currentUserAt(state, baseUrl);
}

/** Before and after every event of the user stream, of the resource that event belongs to. */
export function accountTimeline(events: readonly RecordedEvent[], baseUrl: string): TimelineStep[] {
  let state = initialAccountState();
  return events.map((event) => {
    const before = representationFor(state, event, baseUrl);
    state = evolveAccount(state, event);
    return { event, before, after: representationFor(state, event, baseUrl) };
  });
}

/** The account after these events (an "as of" answer); undefined before registration. */
export function accountAt(events: readonly RecordedEvent[], baseUrl: string) {
  return currentUserAt(events.reduce(evolveAccount, initialAccountState()), baseUrl);
}

/** Ids of the tokens the user stream issued (their events are the token's in the audit log). */
export const tokenIdsIn = (events: readonly RecordedEvent[]): string[] =>
  events.flatMap((event) =>
    event.type === 'AccessTokenIssued' ? [(event.data as AccessTokenIssued['data']).tokenId] : [],
  );

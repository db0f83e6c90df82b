import { NotFoundError } from '#shared/errors/httpErrors';
import type { RequestContext } from '#shared/http/routeSpec';
import { ifMatchRevision } from '#shared/http/etag';
import { isNumericKey } from '#shared/domain/naming/naming';
import { databaseIdOf } from '#shared/http/ids';
import type { EventStore } from '#shared/eventStore/eventStore';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import {
  type BrainState,
  brainDecider,
  brainStreamName,
  collaboratorIdsOf,
} from '#shared/domain/brains/events';
import { type Viewer, canSeeBrain } from '#shared/domain/brains/visibility';
import { requirePrincipal } from '#services/command-api/features/accounts/requirePrincipal';

/**
 * The brain id a `/api/brains/{key}/` path names. A readable_id ends in "-<id>" (readableIdFor), so
 * no read model is needed; the caller checks the stream's readable_id really is the key.
 */
export function brainIdForKey(key: string): number {
  const digits = isNumericKey(key) ? key : /-(\d{1,10})$/.exec(key)?.[1];
  const id = digits === undefined ? undefined : databaseIdOf(digits);
  if (id === undefined) throw new NotFoundError();
  return id;
}

/** True when the key names the brain whose readable_id is given (ids always match their own key). */
export const keyMatches = (key: string, readableId: string): boolean =>
  isNumericKey(key) || key.toLowerCase() === readableId;

/**
 * A brain that does not exist for the caller (none, deleted, another readable_id, or one they may
 * not see) is a 404 before If-Match is compared: a stale or guessed ETag must not answer 409 and
 * so tell a stranger that an invisible brain exists.
 */
export async function visibleBeforeIfMatch(
  store: EventStore,
  key: string,
  viewer: Viewer,
  now: Date,
): Promise<void> {
  const { state } = await loadAggregate(store, brainStreamName(brainIdForKey(key)), brainDecider);
  if (state.status !== 'active' || !keyMatches(key, state.readableId)) throw new NotFoundError();
  const facts = { ...state, collaboratorIds: collaboratorIdsOf(state) };
  if (!canSeeBrain(facts, viewer, now.getTime())) throw new NotFoundError();
}

/** What a command on `/api/brains/{key}/…` starts from: who acts, and on which brain's stream. */
export interface BrainCommandTarget {
  readonly actor: { readonly userId: number; readonly isStaff: boolean };
  readonly key: string;
  readonly brainId: number;
  readonly stream: string;
}

export function brainCommandTarget(ctx: RequestContext<unknown>): BrainCommandTarget {
  const principal = requirePrincipal(ctx);
  const key = ctx.params.key ?? '';
  const brainId = brainIdForKey(key);
  return {
    actor: { userId: principal.userId, isStaff: principal.isStaff },
    key,
    brainId,
    stream: brainStreamName(brainId),
  };
}

/**
 * The revision an If-Match names, once the brain is known to exist for the caller (see
 * visibleBeforeIfMatch); undefined without If-Match.
 */
export async function ifMatchOfVisibleBrain(
  ctx: RequestContext<unknown>,
  store: EventStore,
  target: BrainCommandTarget,
  now: Date,
): Promise<bigint | undefined> {
  const expectedRevision = ifMatchRevision(ctx.req.get('If-Match'));
  if (expectedRevision !== undefined) await visibleBeforeIfMatch(store, target.key, target.actor, now);
  return expectedRevision;
}

/** The decision for the brain the key names: another brain's readable_id is no brain at all. */
export const onKeyedBrain =
  <T>(key: string, decide: (state: BrainState) => T) =>
  (state: BrainState): T => {
    if (state.status === 'active' && !keyMatches(key, state.readableId)) throw new NotFoundError();
    return decide(state);
  };

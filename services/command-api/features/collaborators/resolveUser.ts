import type { EventStore } from '#shared/eventStore/eventStore';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import { findReservationOwner } from '#shared/commandHandling/reserveValue';
import { userDecider } from '#shared/domain/accounts/events';

export interface NamedUser {
  readonly id: number;
  readonly username: string;
}

/**
 * The user a collaborator request names, by username or e-mail, both case-insensitively (as
 * registration reserves them and login matches the e-mail), from the uniqueness reservations and
 * the user's own stream (no read model: the command side decides on what is written). A value with
 * an "@" is tried as an e-mail first, then as a username (usernames may hold an "@").
 */
export async function resolveUser(store: EventStore, value: string): Promise<NamedUser | undefined> {
  const wanted = value.trim().toLowerCase();
  if (wanted === '') return undefined;
  const scopes = wanted.includes('@') ? (['email', 'username'] as const) : (['username'] as const);
  for (const scope of scopes) {
    const owner = await findReservationOwner(store, scope, wanted);
    if (!owner) continue;
    const { state } = await loadAggregate(store, owner, userDecider);
    // A reservation whose registration never happened (a crash in between) names nobody.
    if (state.status === 'registered' && state[scope].toLowerCase() === wanted)
      return { id: state.userId, username: state.username };
  }
  return undefined;
}

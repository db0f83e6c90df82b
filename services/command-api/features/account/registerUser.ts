import type { EventStore } from '../../../../shared/eventStore/eventStore';
import type { CommandContext } from '../../../../shared/commandHandling/commandContext';
import type { IdAllocator } from '../../../../shared/commandHandling/allocateId';
import { handleCommand } from '../../../../shared/commandHandling/handleCommand';
import { releaseValue, reserveValue } from '../../../../shared/commandHandling/reserveValue';
import { ValidationError } from '../../../../shared/errors/httpErrors';
import type { GlobalPosition } from '../../../../shared/eventStore/eventStore';
import { decideUser } from '../../../../shared/domain/identity/decide';
import type { RegisteredUser } from '../../../../shared/domain/identity/events';
import { userDecider, userStreamName } from '../../../../shared/domain/identity/events';

export interface Registration {
  readonly email: string;
  readonly username: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly passwordHash: string;
  readonly isStaff: boolean;
}

export const EMAIL_TAKEN = 'user with this email already exists.';
export const USERNAME_TAKEN = 'A user with that username already exists.';

/**
 * Registers a user with unique email and username, both enforced by reservation streams in the
 * event store (so 20 parallel registrations of one email give exactly one account).
 */
export async function registerUser(
  deps: { store: EventStore; ids: IdAllocator; now: Date },
  registration: Registration,
  ctx: CommandContext,
): Promise<{ user: RegisteredUser; position: GlobalPosition | undefined }> {
  const { store, ids, now } = deps;
  const userId = await ids.next('user', ctx);
  const ownerStream = userStreamName(userId);
  const email = { scope: 'email', value: registration.email, ownerStream, now };
  if (!(await reserveValue(store, email, ctx))) throw ValidationError.field('email', EMAIL_TAKEN);
  const username = { scope: 'username', value: registration.username, ownerStream, now };
  if (!(await reserveValue(store, username, ctx))) {
    await releaseValue(store, email, ctx);
    throw ValidationError.field('username', USERNAME_TAKEN);
  }
  const result = await handleCommand(
    store,
    ownerStream,
    userDecider,
    (state) =>
      decideUser({ type: 'RegisterUser', data: { userId, ...registration, now: now.toISOString() } }, state),
    ctx,
  );
  if (result.state.status !== 'registered') throw new Error('registration did not register');
  return { user: result.state, position: result.position };
}

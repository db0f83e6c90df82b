import type { EventStore } from '#shared/eventStore/eventStore';
import type { CommandContext } from '#shared/commandHandling/commandContext';
import type { IdAllocator } from '#shared/commandHandling/allocateId';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import {
  type CompensationLogger,
  createWithReservations,
} from '#shared/commandHandling/createWithReservations';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { decideUser } from '#shared/domain/accounts/decide';
import type { RegisteredUser } from '#shared/domain/accounts/events';
import { userDecider, userStreamName } from '#shared/domain/accounts/events';

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

export type { CompensationLogger };

/**
 * Registers a user with unique email and username, both enforced by reservation streams in the
 * event store (so 20 parallel registrations of one email give exactly one account); a failed
 * registration gives back what it reserved (createWithReservations).
 */
export async function registerUser(
  deps: { store: EventStore; ids: IdAllocator; now: Date; logger: CompensationLogger },
  registration: Registration,
  ctx: CommandContext,
): Promise<{ user: RegisteredUser; position: GlobalPosition | undefined }> {
  const userId = await deps.ids.next('user', ctx);
  const ownerStream = userStreamName(userId);
  return createWithReservations(deps, ownerStream, ctx, async (reserver) => {
    await reserver.reserve('email', registration.email, 'email', EMAIL_TAKEN);
    await reserver.reserve('username', registration.username, 'username', USERNAME_TAKEN);
    const result = await handleCommand(
      deps.store,
      ownerStream,
      userDecider,
      (state) =>
        decideUser(
          { type: 'RegisterUser', data: { userId, ...registration, now: deps.now.toISOString() } },
          state,
        ),
      ctx,
    );
    if (result.state.status !== 'registered') throw new Error('registration did not register');
    return { user: result.state, position: result.position };
  });
}

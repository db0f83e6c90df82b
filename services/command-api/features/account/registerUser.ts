import type { EventStore } from '../../../../shared/eventStore/eventStore';
import type { CommandContext } from '../../../../shared/commandHandling/commandContext';
import type { IdAllocator } from '../../../../shared/commandHandling/allocateId';
import { handleCommand } from '../../../../shared/commandHandling/handleCommand';
import {
  type ReserveRequest,
  releaseValue,
  reserveValue,
} from '../../../../shared/commandHandling/reserveValue';
import type { Logger } from '../../../../shared/logging/logger';
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

/** Where a failure that must not replace the caller's error is reported. */
export type CompensationLogger = Pick<Logger, 'error'>;

/**
 * Registers a user with unique email and username, both enforced by reservation streams in the
 * event store (so 20 parallel registrations of one email give exactly one account). The
 * reservations are taken first; if the user is not created after all (the append failed, or the
 * username was taken), the reservations this call took are released again, so a failed request
 * never locks an address out.
 */
export async function registerUser(
  deps: { store: EventStore; ids: IdAllocator; now: Date; logger: CompensationLogger },
  registration: Registration,
  ctx: CommandContext,
): Promise<{ user: RegisteredUser; position: GlobalPosition | undefined }> {
  const { store, ids, now } = deps;
  const userId = await ids.next('user', ctx);
  const ownerStream = userStreamName(userId);
  const email = { scope: 'email', value: registration.email, ownerStream, now };
  const username = { scope: 'username', value: registration.username, ownerStream, now };
  const held: ReserveRequest[] = [];
  try {
    if (!(await reserveValue(store, email, ctx))) throw ValidationError.field('email', EMAIL_TAKEN);
    held.push(email);
    if (!(await reserveValue(store, username, ctx))) throw ValidationError.field('username', USERNAME_TAKEN);
    held.push(username);
    const result = await handleCommand(
      store,
      ownerStream,
      userDecider,
      (state) =>
        decideUser(
          { type: 'RegisterUser', data: { userId, ...registration, now: now.toISOString() } },
          state,
        ),
      ctx,
    );
    if (result.state.status !== 'registered') throw new Error('registration did not register');
    return { user: result.state, position: result.position };
  } catch (error) {
    await releaseUnlessCreated(deps, ownerStream, held, ctx);
    throw error;
  }
}

/**
 * Compensation: gives back what this registration reserved, unless the user exists after all (an
 * append can commit and still report a failure, e.g. a connection lost on the way back). Its own
 * failures are logged, never thrown: the caller must see why the registration failed. A value
 * left held is not lost for good: reserveValue takes over a reservation whose owner never appeared.
 */
async function releaseUnlessCreated(
  deps: { store: EventStore; logger: CompensationLogger },
  ownerStream: string,
  held: readonly ReserveRequest[],
  ctx: CommandContext,
): Promise<void> {
  if (held.length === 0) return;
  try {
    if ((await deps.store.readStream(ownerStream, { maxCount: 1 })).length > 0) return;
    for (const request of held.toReversed()) await releaseValue(deps.store, request, ctx);
  } catch (failure) {
    deps.logger.error('could not release the reservations of a failed registration', {
      owner: ownerStream,
      scopes: held.map((r) => r.scope),
      request_id: ctx.requestId,
      error: failure,
    });
  }
}

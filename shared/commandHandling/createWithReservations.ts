import type { EventStore } from '#shared/eventStore/eventStore';
import type { Logger } from '#shared/logging/logger';
import { InvalidFieldError } from '#shared/domain/domainErrors';
import type { CommandContext } from './commandContext';
import { type ReserveRequest, releaseValue, reserveValue } from './reserveValue';
import { holderStatus } from '#shared/domain/reservation/fencing';

/** Where a failure that must not replace the caller's error is reported. */
export type CompensationLogger = Pick<Logger, 'error'>;

export interface ReservationDeps {
  readonly store: EventStore;
  readonly now: Date;
  readonly logger: CompensationLogger;
}

/** What the create step is given: reserve values for the aggregate being created. */
export interface Reserver {
  /** True when the value is now held for the new aggregate; false when someone else holds it. */
  tryReserve(scope: string, value: string): Promise<boolean>;
  /** Holds the value or throws a 400 on `field` with `message` (a taken unique value). */
  reserve(scope: string, value: string, field: string, message: string): Promise<void>;
}

/**
 * Creates an aggregate whose unique values are reservation streams in the event store (so parallel
 * creates of one name give exactly one owner). `create` takes its reservations first, then appends
 * the aggregate's first events to `ownerStream`. When that fails (a value was taken, the decision
 * refused, the append failed), every reservation this call took is released again, so a failed
 * request never locks a value out.
 */
export async function createWithReservations<T>(
  deps: ReservationDeps,
  ownerStream: string,
  ctx: CommandContext,
  create: (reserver: Reserver) => Promise<T>,
): Promise<T> {
  const held: ReserveRequest[] = [];
  const tryReserve = async (scope: string, value: string): Promise<boolean> => {
    const request = { scope, value, ownerStream, now: deps.now };
    if (!(await reserveValue(deps.store, request, ctx))) return false;
    held.push(request);
    return true;
  };
  const reserver: Reserver = {
    tryReserve,
    async reserve(scope, value, field, message) {
      if (!(await tryReserve(scope, value))) throw InvalidFieldError.field(field, message);
    },
  };
  try {
    return await create(reserver);
  } catch (error) {
    await releaseUnlessCreated(deps, ownerStream, held, ctx);
    throw error;
  }
}

/**
 * Compensation: gives back what this create reserved, unless the aggregate exists after all (an
 * append can commit and still report a failure, e.g. a connection lost on the way back). Its own
 * failures are logged, never thrown: the caller must see why the create failed. A value left held
 * is not lost for good: reserveValue takes over a reservation whose owner never appeared. A stream
 * fenced by such a takeover is not a created aggregate: what this create still holds is released.
 */
async function releaseUnlessCreated(
  deps: ReservationDeps,
  ownerStream: string,
  held: readonly ReserveRequest[],
  ctx: CommandContext,
): Promise<void> {
  if (held.length === 0) return;
  try {
    const [first] = await deps.store.readStream(ownerStream, { maxCount: 1 });
    if (holderStatus(first?.type) === 'exists') return;
    for (const request of held.toReversed()) await releaseValue(deps.store, request, ctx);
  } catch (failure) {
    deps.logger.error('could not release the reservations of a failed create', {
      owner: ownerStream,
      scopes: held.map((r) => r.scope),
      request_id: ctx.requestId,
      error: failure,
    });
  }
}

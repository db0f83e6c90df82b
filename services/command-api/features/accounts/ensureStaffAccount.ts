import type { EventStore } from '#shared/eventStore/eventStore';
import type { IdAllocator } from '#shared/commandHandling/allocateId';
import type { PasswordHasher } from '#shared/auth/passwords';
import type { CommandContext } from '#shared/commandHandling/commandContext';
import { systemContext } from '#shared/commandHandling/commandContext';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { findReservationOwner } from '#shared/commandHandling/reserveValue';
import { decideUser } from '#shared/domain/accounts/decide';
import type { UserEvent } from '#shared/domain/accounts/events';
import { userDecider } from '#shared/domain/accounts/events';
import { type CompensationLogger, registerUser } from './registerUser';

export interface StaffAccount {
  readonly email: string;
  readonly password: string;
  readonly username: string;
}

/**
 * Start-up (ADMIN_*) and `npm run admin`: makes sure the account exists, is staff and has this
 * password. Idempotent: a second run with the same values appends nothing.
 */
export async function ensureStaffAccount(
  deps: {
    store: EventStore;
    ids: IdAllocator;
    passwords: PasswordHasher;
    now: () => Date;
    logger: CompensationLogger;
  },
  account: StaffAccount,
  ctx: CommandContext,
): Promise<{ userId: number; created: boolean }> {
  const owner = await findReservationOwner(deps.store, 'email', account.email);
  if (!owner) {
    const { user } = await registerUser(
      { store: deps.store, ids: deps.ids, now: deps.now(), logger: deps.logger },
      {
        email: account.email,
        username: account.username,
        firstName: account.username,
        lastName: '',
        passwordHash: await deps.passwords.hash(account.password),
        isStaff: true,
      },
      ctx,
    );
    return { userId: user.userId, created: true };
  }
  const result = await handleCommand(
    deps.store,
    owner,
    userDecider,
    async (state) => {
      if (state.status !== 'registered') return [];
      const now = deps.now().toISOString();
      const events: UserEvent[] = decideUser({ type: 'SetStaffStatus', data: { isStaff: true, now } }, state);
      if (!(await deps.passwords.verify(state.passwordHash, account.password))) {
        const newPasswordHash = await deps.passwords.hash(account.password);
        events.push(
          ...decideUser(
            {
              type: 'ChangePassword',
              data: { oldPasswordMatches: true, newPasswordHash, currentTokenId: '', now },
            },
            state,
          ),
        );
      }
      return events;
    },
    ctx,
  );
  if (result.state.status !== 'registered')
    throw new Error(`reservation of ${account.email} points at a missing user`);
  return { userId: result.state.userId, created: false };
}

/** Start-up step of every process that accepts writes: ensure the ADMIN_* account when configured. */
export async function ensureConfiguredStaff(
  admin: StaffAccount | undefined,
  deps: { store: EventStore; ids: IdAllocator; passwords: PasswordHasher; logger: CompensationLogger },
  logger: { info(message: string, fields?: Record<string, unknown>): void },
): Promise<void> {
  if (!admin) return;
  const result = await ensureStaffAccount(
    { ...deps, now: () => new Date() },
    admin,
    systemContext('ensure-admin'),
  );
  logger.info('staff account ensured', { userId: result.userId, created: result.created });
}

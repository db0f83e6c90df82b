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
import { InvalidFieldError } from '#shared/domain/domainErrors';
import { type CompensationLogger, EMAIL_TAKEN, registerUser } from './registerUser';

export interface StaffAccount {
  readonly email: string;
  readonly password: string;
  readonly username: string;
}

/** Rounds of "register, or update the account another process registered meanwhile". */
const ENSURE_ATTEMPTS = 20;
const ENSURE_RETRY_MS = 100;

/**
 * Start-up (ADMIN_*) and `npm run admin`: makes sure the account exists, is staff and has this
 * password. Idempotent, also under concurrency: several processes started together with the same
 * ADMIN_* (two command-apis) race to register it; the losers find the winner's account (waiting,
 * bounded, while its registration is still between its email reservation and its user stream) and
 * update it instead of failing.
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
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await ensureOnce(deps, account, ctx);
    if (outcome !== 'raced') return outcome;
    if (attempt >= ENSURE_ATTEMPTS)
      throw new Error(`staff account ${account.email}: its registration did not settle`);
    await new Promise((resolve) => setTimeout(resolve, ENSURE_RETRY_MS));
  }
}

/** One round; 'raced' when another registration of the same email is in flight or just won. */
async function ensureOnce(
  deps: Parameters<typeof ensureStaffAccount>[0],
  account: StaffAccount,
  ctx: CommandContext,
): Promise<{ userId: number; created: boolean } | 'raced'> {
  const owner = await findReservationOwner(deps.store, 'email', account.email);
  if (!owner) {
    try {
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
    } catch (error) {
      // Another process reserved the email first: its account is the one to ensure.
      if (error instanceof InvalidFieldError && isEmailTaken(error)) return 'raced';
      throw error;
    }
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
  // The reservation is held but its user stream is not written yet (a concurrent registration in
  // flight), or that registration failed and gave the email back: look again.
  if (result.state.status !== 'registered') return 'raced';
  return { userId: result.state.userId, created: false };
}

function isEmailTaken(error: InvalidFieldError): boolean {
  return error.fields.email?.includes(EMAIL_TAKEN) === true;
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

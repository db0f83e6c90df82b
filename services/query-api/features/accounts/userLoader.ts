import type { Pool } from 'pg';
import { NotFoundError } from '#shared/errors/httpErrors';
import type { UserWithRevision } from './loadUser';
import { loadUsers } from './loadUser';

type Waiter = { resolve: (user: UserWithRevision) => void; reject: (error: unknown) => void };

/**
 * Reads users from the read model, batching the lookups that arrive together into one query.
 *
 * Nothing is cached: a query is only sent after every request in its batch has arrived, so each
 * sees every write acknowledged before it, whichever process (or machine) projected that write. A
 * cache invalidated by the projector's notifications could not promise that across processes: the
 * notification may reach this process after the writer's client has already read again.
 */
export class UserLoader {
  private pending = new Map<number, Waiter[]>();
  private scheduled = false;

  constructor(private readonly pool: Pool) {}

  get(userId: number): Promise<UserWithRevision> {
    return new Promise((resolve, reject) => {
      const waiters = this.pending.get(userId);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(userId, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs after the I/O callbacks of this loop turn: the batch holds every request parsed in it. */
  private flush(): void {
    const batch = this.pending;
    this.pending = new Map();
    this.scheduled = false;
    loadUsers(this.pool, [...batch.keys()]).then(
      (users) => {
        for (const [id, waiters] of batch) {
          const user = users.get(id);
          for (const waiter of waiters)
            if (user) waiter.resolve(user);
            else waiter.reject(new NotFoundError('User not found.'));
        }
      },
      (error: unknown) => {
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      },
    );
  }
}

import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import type { Lock, Locker, RequestRelease } from '@tus/server';
import { ERRORS } from '@tus/server';
import type { Logger } from '#shared/logging/logger';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import { asError } from '#shared/errors/asError';
import { type SupervisedLoop, startSupervisedLoop } from '#shared/runtime/supervisedLoop';
import { TusHttpError } from './tusHttpError';

/** 423: another request (on any instance) holds the upload for longer than a request waits. */
const uploadLocked = () =>
  new TusHttpError(423, { detail: 'Another request is writing this upload; try again once it is done.' });

const POLL_MS = 50;
/** A waiting request asks the holder again this often (a holder may have taken the lock just after). */
const RELEASE_REQUEST_EVERY_MS = 1000;
/** The NOTIFY channel on which a request finding an upload locked asks its holder to let go. */
export const TUS_LOCK_RELEASE_CHANNEL = 'tus_lock_release';
export const TUS_LOCK_LISTENER_LOOP = 'tus_lock_release_listener';
const CONNECT_TIMEOUT_MS = 5000;

/**
 * tus locks across instances: a session-level PostgreSQL advisory lock per upload id, held on a
 * connection of its own for as long as the request works on the upload. A process that dies loses
 * its connection, and PostgreSQL releases its locks with it.
 *
 * A request finding the lock taken asks its holder to let go, as tus's own MemoryLocker does within
 * one process: `NOTIFY tus_lock_release, '<id>'`; every instance LISTENs, and the one holding the
 * lock calls the holding request's `requestRelease`, so tus ends that request's write gracefully
 * (after `lockDrainTimeout`, keeping the bytes it wrote). A PATCH whose client vanished without a
 * word thus gives way to the resuming client within seconds, not at the body's idle timeout. The
 * waiting request polls the lock up to `waitMs`, then gets 423.
 */
export class PgAdvisoryLocker implements Locker {
  /** requestRelease of the locks held in this process, by upload id. */
  private readonly held = new Map<string, Set<RequestRelease>>();
  /** Checked-out clients and the first error each reported while out (see watch). */
  private readonly watched = new Map<
    PoolClient,
    { error: Error | undefined; listener: (error: Error) => void }
  >();
  private readonly listener: SupervisedLoop | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly waitMs: number,
    /** Where to LISTEN (a connection of its own); absent: release requests are neither sent nor heard. */
    listen?: { readonly connectionString: string; readonly logger: Logger },
  ) {
    if (listen) this.listener = this.listenForReleaseRequests(listen.connectionString, listen.logger);
  }

  newLock(id: string): Lock {
    return new PgAdvisoryLock(this, id);
  }

  /** Stops listening. */
  async close(): Promise<void> {
    await this.listener?.stop();
  }

  /** @internal for PgAdvisoryLock */
  async acquire(id: string, signal: AbortSignal, requestRelease: RequestRelease): Promise<PoolClient> {
    const client = await this.pool.connect();
    this.watch(client);
    const deadline = Date.now() + this.waitMs;
    let askedAt: number | undefined;
    try {
      for (;;) {
        const { rows } = await client.query<{ locked: boolean }>(
          "SELECT pg_try_advisory_lock(hashtextextended('tus:' || $1, 0)) AS locked",
          [id],
        );
        if (rows[0]?.locked) {
          let releases = this.held.get(id);
          if (!releases) this.held.set(id, (releases = new Set()));
          releases.add(requestRelease);
          return client;
        }
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- tus's own error value
        if (signal.aborted) throw ERRORS.ABORTED;
        if (Date.now() >= deadline) throw uploadLocked();
        if (this.listener && (askedAt === undefined || Date.now() - askedAt >= RELEASE_REQUEST_EVERY_MS)) {
          askedAt = Date.now();
          await client.query('SELECT pg_notify($1, $2)', [TUS_LOCK_RELEASE_CHANNEL, id]);
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } catch (error) {
      this.giveBack(client);
      throw error;
    }
  }

  /**
   * A held connection that dies (the database restarts mid-upload) reports an 'error' event on the
   * checked-out client, which the pool does not hear: unheard, it would end the process. Heard, it
   * makes the client discarded when given back; the lock went with the connection.
   */
  private watch(client: PoolClient): void {
    const watched: { error: Error | undefined; listener: (error: Error) => void } = {
      error: undefined,
      listener: (error) => {
        watched.error ??= error;
      },
    };
    client.on('error', watched.listener);
    this.watched.set(client, watched);
  }

  private giveBack(client: PoolClient, error?: Error): void {
    const watched = this.watched.get(client);
    this.watched.delete(client);
    if (watched) client.off('error', watched.listener);
    client.release(error ?? watched?.error);
  }

  /** @internal for PgAdvisoryLock */
  async release(id: string, client: PoolClient, requestRelease: RequestRelease): Promise<void> {
    const releases = this.held.get(id);
    releases?.delete(requestRelease);
    if (releases?.size === 0) this.held.delete(id);
    try {
      await client.query("SELECT pg_advisory_unlock(hashtextextended('tus:' || $1, 0))", [id]);
      this.giveBack(client);
    } catch (error) {
      // A connection whose unlock failed is dropped: closing it releases the lock for sure.
      this.giveBack(client, asError(error));
    }
  }

  private releaseRequested(id: string): void {
    for (const requestRelease of this.held.get(id) ?? [])
      void Promise.resolve(requestRelease()).catch(() => undefined);
  }

  private listenForReleaseRequests(connectionString: string, logger: Logger): SupervisedLoop {
    return startSupervisedLoop({
      name: TUS_LOCK_LISTENER_LOOP,
      logger,
      backoff: { initialMs: 200, maxMs: 5000 },
      body: async ({ signal, up }) => {
        const client = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
        const lost = new AbortController();
        const onLost = (error?: Error): void => lost.abort(error ?? new Error('the LISTEN connection ended'));
        client.on('error', onLost);
        client.on('end', () => onLost());
        client.on('notification', (message) => {
          if (message.channel === TUS_LOCK_RELEASE_CHANNEL && message.payload)
            this.releaseRequested(message.payload);
        });
        try {
          await client.connect();
          await client.query(`LISTEN ${TUS_LOCK_RELEASE_CHANNEL}`);
          up();
          const awake = AbortSignal.any([signal, lost.signal]);
          while (!awake.aborted) await abortableSleep(60_000, awake);
          if (!signal.aborted) throw asError(lost.signal.reason);
        } finally {
          await client.end().catch(() => undefined);
        }
      },
    });
  }
}

class PgAdvisoryLock implements Lock {
  private held: { client: PoolClient; requestRelease: RequestRelease } | undefined;

  constructor(
    private readonly locker: PgAdvisoryLocker,
    private readonly id: string,
  ) {}

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const client = await this.locker.acquire(this.id, signal, requestRelease);
    this.held = { client, requestRelease };
  }

  async unlock(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    if (held) await this.locker.release(this.id, held.client, held.requestRelease);
  }
}

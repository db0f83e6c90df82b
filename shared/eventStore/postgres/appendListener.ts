import pg from 'pg';
import type { SqlNames } from './sqlNames';

const RECONNECT_DELAY_MS = 1000;
const CONNECT_TIMEOUT_MS = 5000;

/**
 * A dedicated LISTEN connection that wakes one subscription when an append commits. Losing the
 * connection is not fatal: the subscription keeps polling on its timeout while this reconnects.
 */
export class AppendListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private notified = false;
  private wake: (() => void) | undefined;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  /**
   * `ownOrigin`: the payload of the NOTIFYs of the store this listener belongs to. Such a NOTIFY
   * only announces appends that already woke it (appendCommitted, called at each of their commits),
   * so it is ignored rather than read for a second time; every other NOTIFY wakes it.
   */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly names: SqlNames,
    private readonly ownOrigin?: string,
  ) {}

  /** Connects once before the first read, so no append between the two goes unnoticed. */
  async start(): Promise<void> {
    this.ensureConnected();
    await this.connecting;
  }

  /** Forgets earlier wake-ups. Call right before reading: only appends after that should wake us. */
  reset(): void {
    this.notified = false;
  }

  /** Resolves on a notification since reset(), after timeoutMs, or when the signal aborts. */
  wait(timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.notified || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.wake?.();
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private ensureConnected(): void {
    if (this.client || this.connecting || this.closed) return;
    this.connecting = this.connect()
      .catch(() => this.scheduleReconnect())
      .finally(() => {
        this.connecting = undefined;
      });
  }

  /** On a timer, not on the next wait: a consumer busy with a batch must not delay the reconnect. */
  private scheduleReconnect(): void {
    if (this.closed) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.ensureConnected(), RECONNECT_DELAY_MS);
    this.reconnectTimer.unref();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    client.on('notification', (message) => {
      if (message.channel !== this.names.channel) return;
      if (this.ownOrigin !== undefined && message.payload === this.ownOrigin) return;
      this.notify();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.names.channelIdentifier}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    // Appends committed while nobody listened were not announced: read once more to be sure.
    this.notify();
  }

  /**
   * An append committed in this very process (the same store): wake at once rather than after
   * PostgreSQL's round trip of its NOTIFY, which still comes (for other processes) and is ignored.
   */
  appendCommitted(): void {
    this.notify();
  }

  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.scheduleReconnect();
    this.notify(); // appends may now go unannounced: read again rather than wait
  }

  private notify(): void {
    this.notified = true;
    this.wake?.();
  }
}

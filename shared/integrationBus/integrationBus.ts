/**
 * The integration bus port: where events leave the service for other consumers (Kafka). The relay
 * (services/relay) is its only writer; the all-in-one without a broker has none.
 */
export interface BusMessage {
  readonly topic: string;
  /** Messages with one key keep their order (Kafka: one partition): the event's stream. */
  readonly key: string;
  /** JSON. */
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface IntegrationBus {
  /** The topics the relay writes to exist (created when missing). */
  prepare(topics: readonly string[]): Promise<void>;
  /**
   * Resolves once the broker has acknowledged every message durably (all in-sync replicas). Order is
   * kept per key. A rejection means some may have been written: the caller sends them all again.
   */
  publish(messages: readonly BusMessage[]): Promise<void>;
  /** Rejects when the broker cannot be reached (/health/). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

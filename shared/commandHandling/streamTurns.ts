import type { EventStore } from '#shared/eventStore/eventStore';

/**
 * Writers of one stream in one process take turns: a command waits for the one before it to
 * finish its attempt instead of reading the same revision and losing the race, which under load
 * (50 requests by one user at once) burns attempt after attempt. Races with other processes remain,
 * and are retried with backoff. Turns are not taken inside a unit of work: there the stream's lock
 * in the database already makes writers queue, and a second, in-process lock could close a cycle
 * with it that PostgreSQL's deadlock detector cannot see.
 */
export class StreamTurns {
  private readonly tails = new Map<string, Promise<void>>();

  async take<T>(streamName: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(streamName);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = previous ? previous.then(() => mine) : mine;
    this.tails.set(streamName, tail);
    try {
      await previous;
      return await work();
    } finally {
      done();
      if (this.tails.get(streamName) === tail) this.tails.delete(streamName);
    }
  }
}

const turnsByStore = new WeakMap<EventStore, StreamTurns>();

/** The turns of one store (one process's view of one event store); undefined inside a unit of work. */
export function streamTurnsOf(store: EventStore): StreamTurns | undefined {
  if (store.unitOfWork?.isActive()) return undefined;
  let turns = turnsByStore.get(store);
  if (!turns) turnsByStore.set(store, (turns = new StreamTurns()));
  return turns;
}

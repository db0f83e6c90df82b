import { type EventStore, WrongExpectedRevisionError } from '#shared/eventStore/eventStore';
import type { SyntheticAppend } from './syntheticBrains';

/** Brains per unit of work: one transaction commits this many brains' appends. */
export const SYNTHETIC_CHUNK = 500;
/** Units of work in flight at once. */
export const SYNTHETIC_WRITERS = 4;

export interface WrittenBrains {
  readonly firstId: number;
  readonly lastId: number;
  readonly events: number;
  readonly seconds: number;
}

export interface WriteBrainsOptions {
  readonly count: number;
  /**
   * The appends of brains first..last, the run's brains number `index`.. (0-based); the first
   * append is their id allocations (`sequence-brain`).
   */
  readonly generate: (first: number, last: number, index: number) => SyntheticAppend[];
  readonly onProgress?: (brainsWritten: number) => void;
  /** Runs before a chunk's appends (after its ids are allocated): e.g. storing its files' bytes. */
  readonly beforeWrite?: (appends: readonly SyntheticAppend[]) => Promise<void>;
  readonly chunk?: number;
  readonly writers?: number;
}

/**
 * Writes `count` brains through the EventStore port. Each chunk's ids are allocated first by one
 * append to `sequence-brain` at the revision the IdAllocator expects (revision n-1 holds id n), so
 * ids continue after those already taken and a service allocating ids meanwhile only costs a retry
 * (a lost race regenerates the chunk with the next free ids). The chunks' other appends (new streams)
 * then go in units of work, `writers` at a time.
 */
export async function writeSyntheticBrains(
  store: EventStore,
  options: WriteBrainsOptions,
): Promise<WrittenBrains> {
  const chunk = options.chunk ?? SYNTHETIC_CHUNK;
  const writers = options.writers ?? SYNTHETIC_WRITERS;
  const started = performance.now();
  let revision: bigint | 'no_stream' = 'no_stream';
  let events = 0;
  let written = 0;
  let firstId: number | undefined;
  let lastId = 0;
  let allocatedBrains = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: Error | undefined;
  while (allocatedBrains < options.count || inFlight.size > 0) {
    if (failure !== undefined) break;
    const remaining = options.count - allocatedBrains;
    if (remaining > 0 && inFlight.size < writers) {
      const size = Math.min(chunk, remaining);
      const index = allocatedBrains;
      const allocated = await allocateChunk(store, revision, size, (first, last) =>
        options.generate(first, last, index),
      );
      allocatedBrains += size;
      revision = allocated.revision;
      firstId ??= allocated.first;
      lastId = allocated.first + size - 1;
      events += allocated.appends[0]!.events.length;
      const rest = allocated.appends.slice(1);
      const work: Promise<void> = Promise.resolve(options.beforeWrite?.(rest))
        .then(() => inOneUnit(store, () => appendAll(store, rest)))
        .then((count) => {
          events += count;
          written += size;
          options.onProgress?.(written);
        })
        .catch((error: unknown) => {
          failure ??= error instanceof Error ? error : new Error(String(error));
        })
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
      continue;
    }
    await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure;
  return {
    firstId: firstId ?? 0,
    lastId,
    events,
    seconds: (performance.now() - started) / 1000,
  };
}

async function allocateChunk(
  store: EventStore,
  guess: bigint | 'no_stream',
  size: number,
  generate: (first: number, last: number) => SyntheticAppend[],
): Promise<{ first: number; revision: bigint; appends: SyntheticAppend[] }> {
  let expected = guess;
  for (let attempt = 0; attempt < 1000; attempt++) {
    const first = expected === 'no_stream' ? 1 : Number(expected) + 2;
    const appends = generate(first, first + size - 1);
    const ids = appends[0]!;
    try {
      const result = await store.appendToStream(ids.stream, ids.events, { expectedRevision: expected });
      return { first, revision: result.nextExpectedRevision, appends };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      expected = error.actual;
    }
  }
  throw new Error('could not allocate brain ids: sequence-brain keeps moving');
}

/** Each stream is new: 'no_stream' is what a create appends with. */
export async function appendAll(store: EventStore, appends: readonly SyntheticAppend[]): Promise<number> {
  let events = 0;
  for (const { stream, events: batch } of appends) {
    await store.appendToStream(stream, batch, { expectedRevision: 'no_stream' });
    events += batch.length;
  }
  return events;
}

function inOneUnit<T>(store: EventStore, work: () => Promise<T>): Promise<T> {
  return store.unitOfWork ? store.unitOfWork.run(work) : work();
}

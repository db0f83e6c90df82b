import type { EventStore } from '#shared/eventStore/eventStore';
import { brainAppends, referenceData, type CatalogueAppend } from './catalogueEvents';

/** Brains per unit of work: one transaction commits this many brains' appends. */
const CHUNK = 500;
const WRITERS = 4;

export interface WrittenCatalogue {
  readonly brains: number;
  readonly events: number;
  readonly seconds: number;
}

/**
 * Writes a generated catalogue of `brains` brains through the EventStore port: the reference data,
 * then the brains in chunks, WRITERS chunks at a time, each chunk's appends in one unit of work
 * where the store has one. Id allocations are appended in id order (`sequence-brain` revision
 * n-1 holds id n, as the IdAllocator expects), ahead of the chunk's brains.
 */
export async function writeCatalogue(
  store: EventStore,
  brains: number,
  onProgress: (brainsWritten: number) => void,
): Promise<WrittenCatalogue> {
  const started = performance.now();
  let events = await appendAll(store, referenceData());
  let nextIdRevision: bigint | 'no_stream' = 'no_stream';
  for (let first = 1; first <= brains; first += CHUNK * WRITERS) {
    const chunks: CatalogueAppend[][] = [];
    for (let start = first; start < first + CHUNK * WRITERS && start <= brains; start += CHUNK) {
      const [ids, ...rest] = brainAppends(start, Math.min(brains, start + CHUNK - 1));
      const result = await store.appendToStream(ids!.stream, ids!.events, {
        expectedRevision: nextIdRevision,
      });
      nextIdRevision = result.nextExpectedRevision;
      events += ids!.events.length;
      chunks.push(rest);
    }
    const written = await Promise.all(chunks.map((chunk) => inOneUnit(store, () => appendAll(store, chunk))));
    events += written.reduce((a, b) => a + b, 0);
    onProgress(Math.min(brains, first + CHUNK * WRITERS - 1));
  }
  return { brains, events, seconds: (performance.now() - started) / 1000 };
}

/** Each stream is new: 'no_stream' is what a create appends with. */
async function appendAll(store: EventStore, appends: readonly CatalogueAppend[]): Promise<number> {
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

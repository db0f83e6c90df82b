import type { EventStore } from '#shared/eventStore/eventStore';
import { appendAll, writeSyntheticBrains } from '#services/command-api/seedSynthetic/writeSyntheticBrains';
import { brainAppends, referenceData } from './catalogueEvents';

export interface WrittenCatalogue {
  readonly brains: number;
  readonly events: number;
  readonly seconds: number;
}

/**
 * Writes a generated catalogue of `brains` brains through the EventStore port: the reference data,
 * then the brains as `npm run seed -- --synthetic` writes them (writeSyntheticBrains: chunks of
 * brains in units of work, several at a time, their ids allocated ahead of each chunk).
 */
export async function writeCatalogue(
  store: EventStore,
  brains: number,
  onProgress: (brainsWritten: number) => void,
): Promise<WrittenCatalogue> {
  const started = performance.now();
  const reference = await appendAll(store, referenceData());
  const written = await writeSyntheticBrains(store, { count: brains, generate: brainAppends, onProgress });
  return { brains, events: reference + written.events, seconds: (performance.now() - started) / 1000 };
}

/**
 * The replays' reads of streams (history and as_of: decisions.md "Audit"), kept in this process.
 *
 * An event, once committed, never changes and never goes: a stream is a list that only grows at
 * its end. So what was read of a stream can be kept and only its tail asked of the store again,
 * and a read bounded by a position the store had fully committed when the stream was last read
 * needs no query at all. Every answer is exactly what `store.readStream` would answer with the
 * same options at that moment; the replay is still a replay of the stored events, only not parsed
 * again on every request. Bounded by REPLAY_CACHE_MB (least recently used streams go first).
 *
 * When a store's events can change after all (a future crypto-shredding rewrites what a read
 * returns), that change must call `forget`.
 */
import { LRUCache } from 'lru-cache';
import {
  type EventStore,
  type GlobalPosition,
  type ReadStreamOptions,
  type RecordedEvent,
  comparePositions,
} from '#shared/eventStore/eventStore';
import { forwardingEventStore } from '#shared/eventStore/forwardingEventStore';

/** What is kept of one stream: its first events in revision order (revision i at index i). */
interface KnownStream {
  readonly events: readonly RecordedEvent[];
  /**
   * Every event of the stream at or before this position is in `events` (the store's head, read
   * just before the events were): undefined until a read bounded by a position asked for it.
   */
  readonly complete: GlobalPosition | undefined;
  readonly bytes: number;
}

/**
 * Roughly what an event costs kept in memory: its object, its strings (two bytes a character), and
 * the states the replays' folds remember for it while it is kept (streamFold: about 500 bytes).
 */
const ENTRY_OVERHEAD = 1024;
const weighEvent = (event: RecordedEvent): number =>
  ENTRY_OVERHEAD + 2 * (JSON.stringify(event.data).length + event.streamName.length + event.type.length);

export class StreamCache {
  private readonly streams: LRUCache<string, KnownStream> | undefined;

  constructor(
    private readonly store: Pick<EventStore, 'readStream' | 'headPosition'>,
    { maxBytes }: { readonly maxBytes: number },
  ) {
    // A stream too big for a quarter of the budget is read from the store each time.
    this.streams =
      maxBytes > 0
        ? new LRUCache({ maxSize: maxBytes, maxEntrySize: maxBytes / 4, sizeCalculation: (s) => s.bytes })
        : undefined;
  }

  /** What `store.readStream(name, options)` answers now. */
  async readStream(name: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (!this.streams) return this.store.readStream(name, options);
    const known = this.streams.get(name);
    if (known && answers(known, options)) return select(known.events, options);
    const read = await this.readTail(name, known, options.toPosition !== undefined);
    return read ? select(read.events, options) : this.store.readStream(name, options);
  }

  /** Drops what is kept of a stream (its stored events were rewritten). */
  forget(name: string): void {
    this.streams?.delete(name);
  }

  /**
   * The stream as the store holds it now: what is known plus the events after it. With `complete`,
   * the store's head is read first, so every event up to it is in the answer. Undefined when the
   * revisions read do not follow on from the known ones (never expected: then nothing is kept).
   */
  private async readTail(
    name: string,
    known: KnownStream | undefined,
    complete: boolean,
  ): Promise<KnownStream | undefined> {
    const head = complete ? await this.store.headPosition() : undefined;
    const from = known?.events.length ?? 0;
    const tail = await this.store.readStream(name, { fromRevision: BigInt(from) });
    // Another read of the stream may have landed meanwhile: keep the longer of the two.
    const base = this.streams!.get(name) ?? known;
    const kept = BigInt(base?.events.length ?? 0);
    const fresh = tail.filter((event) => event.streamRevision >= kept);
    const completeAt = later(base?.complete, head);
    // Nothing new (most reads): what is kept stands as it is, not copied.
    if (base && fresh.length === 0 && completeAt === base.complete && base.events.length >= from) return base;
    const events = [...(base?.events ?? [])];
    let bytes = base?.bytes ?? ENTRY_OVERHEAD;
    for (const event of fresh) {
      if (event.streamRevision !== BigInt(events.length)) {
        this.streams!.delete(name);
        return undefined;
      }
      events.push(deepFreeze(event));
      bytes += weighEvent(event);
    }
    if (events.length < from) {
      // The stream is shorter than what was kept of it: a store reset under a running process.
      this.streams!.delete(name);
      return undefined;
    }
    const stream: KnownStream = { events, bytes, complete: completeAt };
    this.streams!.set(name, stream);
    return stream;
  }
}

/** Kept events are shared by every reader: frozen, a reader's change would throw, not spread. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

const later = (a: GlobalPosition | undefined, b: GlobalPosition | undefined): GlobalPosition | undefined =>
  a === undefined ? b : b === undefined || comparePositions(a, b) >= 0 ? a : b;

/**
 * Whether the kept events alone give the answer: a read up to a position the stream is complete
 * at, or a read with neither a position nor a time bound whose revisions are all kept (the first
 * `maxCount` events, or the events up to `toRevision`). Anything else asks the store for the tail.
 */
function answers(known: KnownStream, options: ReadStreamOptions): boolean {
  if (options.toPosition !== undefined)
    return known.complete !== undefined && comparePositions(options.toPosition, known.complete) <= 0;
  if (options.toTime !== undefined) return false;
  const kept = BigInt(known.events.length);
  const from = options.fromRevision ?? 0n;
  if (options.toRevision !== undefined && options.toRevision < kept) return true;
  return options.maxCount !== undefined && from + BigInt(options.maxCount) <= kept;
}

/** The events `readStream` selects with these options, from the stream's events in revision order. */
function select(events: readonly RecordedEvent[], options: ReadStreamOptions): RecordedEvent[] {
  const { fromRevision, toRevision, toPosition, toTime, maxCount } = options;
  const toMs = toTime?.getTime();
  const selected: RecordedEvent[] = [];
  for (const event of events.slice(fromRevision === undefined ? 0 : Number(fromRevision))) {
    if (maxCount !== undefined && selected.length >= maxCount) break;
    if (toRevision !== undefined && event.streamRevision > toRevision) break;
    if (toPosition !== undefined && comparePositions(event.position, toPosition) > 0) continue;
    // The store keeps microseconds and reports milliseconds: "at or before" a time, to the millisecond.
    if (toMs !== undefined && Date.parse(event.metadata.recordedAt) > toMs) continue;
    selected.push(event);
  }
  return selected;
}

/** The store, its stream reads going through the cache (for the query side: it never appends). */
export function withStreamCache(store: EventStore, cache: StreamCache): EventStore {
  return { ...forwardingEventStore(store), readStream: (name, options) => cache.readStream(name, options) };
}

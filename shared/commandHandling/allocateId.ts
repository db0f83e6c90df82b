import type { AppendResult, EventStore, StreamAppend } from '#shared/eventStore/eventStore';
import { WrongExpectedRevisionError } from '#shared/eventStore/eventStore';
import type { CommandContext } from './commandContext';
import { toNewEvents } from './handleCommand';
import { streamTurnsOf } from './streamTurns';

/**
 * Integer ids are allocated on the write side so a write response carries them. Each id is one
 * event in `sequence-<name>`, appended at the exact next revision: id n lives at revision n-1, so a
 * lost race tells us the actual revision and we try the next one. No read is needed in the common
 * case because each process remembers where it last saw the sequence, and allocations in one
 * process take turns (streamTurns), so only other processes can make a guess wrong.
 */
export class IdAllocator {
  private readonly guesses = new Map<string, bigint>();

  constructor(private readonly store: EventStore) {}

  next(sequence: string, ctx: CommandContext): Promise<number> {
    const stream = `sequence-${sequence}`;
    const turns = streamTurnsOf(this.store);
    const allocate = () => this.allocate(sequence, stream, ctx);
    return turns ? turns.take(stream, allocate) : allocate();
  }

  /**
   * Allocates the next id of `sequence` and appends, atomically with its IdAllocated, what `with(id)`
   * gives (the first events of the aggregate the id names): one statement and one commit for all of
   * them (store.appendToStreams, which the caller checks is there). When the guess was stale, the
   * next id is tried and `with` is called again for it; any other refusal (a stream of `with`'s not
   * where it expected) is thrown as it is, with nothing appended and the id not taken.
   */
  nextWith(
    sequence: string,
    ctx: CommandContext,
    appendsFor: (id: number) => readonly StreamAppend[],
  ): Promise<{ readonly id: number; readonly results: readonly AppendResult[] }> {
    const appendToStreams = this.store.appendToStreams;
    if (!appendToStreams) throw new Error('nextWith needs a store that appends to several streams at once');
    // Named `sequence-*`, the stream is locked before the id's streams (m0007): a lost guess retried
    // inside a unit of work, whose earlier locks stay held, cannot deadlock.
    const stream = `sequence-${sequence}`;
    const turns = streamTurnsOf(this.store);
    const allocate = async () => {
      let expected: bigint | undefined = this.guesses.get(sequence);
      for (let attempt = 0; attempt < 1000; attempt++) {
        const id = expected === undefined ? 1 : Number(expected) + 2;
        const idAllocated: StreamAppend = {
          streamName: stream,
          events: toNewEvents([{ type: 'IdAllocated', data: { sequence, id } }], ctx),
          expectedRevision: expected ?? 'no_stream',
        };
        try {
          const results = await appendToStreams([idAllocated, ...appendsFor(id)]);
          this.guesses.set(sequence, BigInt(id - 1));
          return { id, results: results.slice(1) };
        } catch (error) {
          if (!(error instanceof WrongExpectedRevisionError) || error.streamName !== stream) throw error;
          expected = error.actual === 'no_stream' ? undefined : error.actual;
        }
      }
      throw new Error(`could not allocate an id in sequence ${sequence}`);
    };
    return turns ? turns.take(stream, allocate) : allocate();
  }

  private async allocate(sequence: string, stream: string, ctx: CommandContext): Promise<number> {
    let expected: bigint | undefined = this.guesses.get(sequence);
    for (let attempt = 0; attempt < 1000; attempt++) {
      const id = expected === undefined ? 1 : Number(expected) + 2;
      try {
        await this.store.appendToStream(
          stream,
          toNewEvents([{ type: 'IdAllocated', data: { sequence, id } }], ctx),
          { expectedRevision: expected ?? 'no_stream' },
        );
        this.guesses.set(sequence, BigInt(id - 1));
        return id;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        expected = error.actual === 'no_stream' ? undefined : error.actual;
      }
    }
    throw new Error(`could not allocate an id in sequence ${sequence}`);
  }
}

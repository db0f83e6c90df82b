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
  /**
   * Per sequence, the allocations under way inside units of work, which take no turns: the
   * revision the next one should expect (the one the last began will write). Several creates with
   * an Idempotency-Key at once guessed the same id from the last one allocated, and all but one
   * lost (1.5 appends per create with 8 clients); each now guesses the id after the one begun
   * before it, which the database's lock makes it wait for. A guess that proves wrong costs one
   * more try, as before.
   */
  private readonly underWay = new Map<string, { allocations: number; next: bigint }>();

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
    const allocate = async (speculate: boolean) => {
      let expected: bigint | undefined = speculate ? this.beginGuess(sequence) : this.guesses.get(sequence);
      try {
        for (let attempt = 0; attempt < 1000; attempt++) {
          const id = expected === undefined ? 1 : Number(expected) + 2;
          if (speculate) this.reserve(sequence, BigInt(id - 1));
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
      } finally {
        if (speculate) this.endGuess(sequence);
      }
    };
    return turns ? turns.take(stream, () => allocate(false)) : allocate(true);
  }

  /** The revision an allocation inside a unit of work expects first (see underWay). */
  private beginGuess(sequence: string): bigint | undefined {
    const current = this.underWay.get(sequence);
    if (current) {
      current.allocations += 1;
      return current.next;
    }
    const last = this.guesses.get(sequence);
    // The revision it will write is reserved below, once its id is known.
    this.underWay.set(sequence, { allocations: 1, next: last ?? -1n });
    return last;
  }

  /** An allocation under way tries to write `revision`: the next one begun expects it. */
  private reserve(sequence: string, revision: bigint): void {
    const current = this.underWay.get(sequence);
    if (current && revision > current.next) current.next = revision;
  }

  private endGuess(sequence: string): void {
    const current = this.underWay.get(sequence);
    if (current && --current.allocations === 0) this.underWay.delete(sequence);
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

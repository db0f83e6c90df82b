import type { RecordedEvent } from './eventStore';
import { streamFold } from './streamFold';

const event = (streamName: string, revision: number): RecordedEvent => ({
  id: `${streamName}/${revision}`,
  type: 'Noted',
  data: { n: revision },
  metadata: {
    actor: 'system',
    requestId: 'r',
    correlationId: 'c',
    causationId: null,
    schemaVersion: 1,
    recordedAt: '2026-11-27T00:00:00.000Z',
  },
  streamName,
  streamRevision: BigInt(revision),
  position: { commit: BigInt(revision + 10), prepare: BigInt(revision) },
});

function counted(): { fold: (events: readonly RecordedEvent[]) => string; steps: () => number } {
  let steps = 0;
  const fold = streamFold<string>(
    () => '',
    (state, e) => {
      steps++;
      return `${state}${e.id};`;
    },
  );
  return { fold, steps: () => steps };
}

const plain = (events: readonly RecordedEvent[]): string => events.map((e) => `${e.id};`).join('');
const stream = Array.from({ length: 10 }, (_, i) => event('brain-1', i));

it('folds each event of a stream once, however many prefixes are asked for', () => {
  const { fold, steps } = counted();
  expect(fold(stream.slice(0, 4))).toBe(plain(stream.slice(0, 4)));
  expect(steps()).toBe(4);
  expect(fold(stream.slice(0, 2))).toBe(plain(stream.slice(0, 2)));
  expect(fold(stream)).toBe(plain(stream));
  expect(steps()).toBe(10);
  expect(fold(stream.slice(0, 7))).toBe(plain(stream.slice(0, 7)));
  expect(fold([])).toBe('');
  expect(steps()).toBe(10);
});

it('folds anything but a gapless run from revision 0 afresh, remembering nothing of it', () => {
  const { fold, steps } = counted();
  fold(stream);
  const withGap = [stream[0]!, stream[2]!, stream[3]!];
  expect(fold(withGap)).toBe(plain(withGap));
  const fromMiddle = stream.slice(3, 6);
  expect(fold(fromMiddle)).toBe(plain(fromMiddle));
  const mixed = [stream[0]!, event('brain-2', 1)];
  expect(fold(mixed)).toBe(plain(mixed));
  expect(steps()).toBe(10 + 3 + 3 + 2);
});

it('folds equal events read afresh (other objects) again', () => {
  const { fold, steps } = counted();
  fold(stream);
  const reread = stream.map((e) => ({ ...e }));
  expect(fold(reread)).toBe(plain(stream));
  expect(steps()).toBe(20);
});

import { memoryEventStore } from '#tests/support/memoryEventStore';
import { systemContext } from '#shared/commandHandling/commandContext';
import { toNewEvents } from '#shared/commandHandling/handleCommand';
import type { UnitOfWork } from './eventStore';
import { instrumentEventStore } from './instrumentedEventStore';

const event = (type: string) => toNewEvents([{ type, data: {} }], systemContext('test'))[0]!;

/** A unit of work that is always open and keeps its commit effects until told the outcome. */
function pendingUnitOfWork() {
  let effects: (() => Promise<void>)[] = [];
  const unitOfWork: UnitOfWork = {
    run: (work) => work({ query: () => Promise.reject(new Error('not used')) } as never),
    isActive: () => true,
    afterCommit: (effect) => {
      effects.push(effect);
      return Promise.resolve();
    },
    afterRollback: () => undefined,
  };
  return {
    unitOfWork,
    commit: () => Promise.all(effects.map((e) => e())),
    rollBack: () => (effects = []),
  };
}

test('appends outside a unit of work are counted by type at once', async () => {
  const counted: [string, number][] = [];
  const store = instrumentEventStore(memoryEventStore(), (type, n) => counted.push([type, n]));
  await store.appendToStream('s-1', [event('A'), event('B'), event('A')], { expectedRevision: 'any' });
  expect(counted).toEqual([
    ['A', 2],
    ['B', 1],
  ]);
});

test('inside a unit of work an append is counted when it commits, and never when it rolls back', async () => {
  const counted: [string, number][] = [];
  const pending = pendingUnitOfWork();
  const store = instrumentEventStore({ ...memoryEventStore(), unitOfWork: pending.unitOfWork }, (type, n) =>
    counted.push([type, n]),
  );
  await store.appendToStream('s-1', [event('A')], { expectedRevision: 'any' });
  expect(counted).toEqual([]);
  pending.rollBack();
  await store.appendToStream('s-2', [event('B')], { expectedRevision: 'any' });
  await pending.commit();
  expect(counted).toEqual([['B', 1]]);
});

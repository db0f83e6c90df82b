import type { PoolClient } from 'pg';
import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { applyInRuns, type ProjectionContext } from './projection';

type Event = { readonly type: 'Created' | 'Changed'; readonly data: { readonly id: number } };
const isCreated = (event: Event): event is Event & { type: 'Created' } => event.type === 'Created';

const recorded = (type: Event['type'], id: number): RecordedEvent =>
  ({ type, data: { id }, streamRevision: BigInt(id) }) as unknown as RecordedEvent;
const ctx = { client: {} as PoolClient, table: (name: string) => name } satisfies ProjectionContext;

test('runs of batchable events go together, everything else one by one, in the recorded order', async () => {
  const calls: string[] = [];
  const apply = applyInRuns<Event, Event & { type: 'Created' }>(
    isCreated,
    (_ctx, run, recordedRun) => {
      calls.push(
        `run ${run.map((e) => e.data.id).join(',')} @ ${recordedRun.map((r) => r.streamRevision).join(',')}`,
      );
      return Promise.resolve(run.map((e) => `created:${e.data.id}`));
    },
    (_ctx, event) => {
      calls.push(`one ${event.data.id}`);
      return Promise.resolve([`changed:${event.data.id}`]);
    },
  );
  const events = [
    recorded('Created', 1),
    recorded('Created', 2),
    recorded('Changed', 1),
    recorded('Created', 3),
    recorded('Changed', 3),
    recorded('Changed', 2),
  ];
  expect(await apply(ctx, events)).toEqual([
    'created:1',
    'created:2',
    'changed:1',
    'created:3',
    'changed:3',
    'changed:2',
  ]);
  expect(calls).toEqual(['run 1,2 @ 1,2', 'one 1', 'run 3 @ 3', 'one 3', 'one 2']);
  calls.length = 0;
  expect(await apply(ctx, [])).toEqual([]);
  expect(calls).toEqual([]);
});

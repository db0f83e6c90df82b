import { randomBytes, randomUUID } from 'node:crypto';
import { createTestDatabase } from '#tests/support/testPostgres';
import { UnitOfWorkConflictError, comparePositions, type NewEvent } from '#shared/eventStore/eventStore';
import { createPostgresEventStore, type PostgresEventStore } from './postgresEventStore';
import type { SqlExecutor } from './sqlExecutor';

let connectionString: string;
let store: PostgresEventStore;
/** Another process's view: its own pool, outside every unit of work of `store`. */
let outside: PostgresEventStore;

const newEvent = (type = 'ThingHappened'): NewEvent => ({
  id: randomUUID(),
  type,
  data: {},
  metadata: { actor: 'system', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 },
});

/** Resolves once `promise` has been waiting for `ms` without settling: it is blocked, not slow. */
async function stillPending(promise: Promise<unknown>, ms = 300): Promise<boolean> {
  const marker = Symbol('pending');
  const timer = new Promise((resolve) => setTimeout(() => resolve(marker), ms));
  return (
    (await Promise.race([
      promise.then(
        () => 'settled',
        () => 'settled',
      ),
      timer,
    ])) === marker
  );
}

beforeAll(async () => {
  connectionString = await createTestDatabase('unit_of_work');
});

beforeEach(async () => {
  const schema = `es_${randomBytes(5).toString('hex')}`;
  store = createPostgresEventStore({ connectionString, schema, poolSize: 6 });
  await store.migrate();
  outside = createPostgresEventStore({ connectionString, schema, poolSize: 2 });
  await store.pool.query('CREATE TABLE IF NOT EXISTS uow_side_effects (note text NOT NULL)');
  await store.pool.query('TRUNCATE uow_side_effects');
});

afterEach(async () => {
  await store.close();
  await outside.close();
});

test('the work reads its own appends; nobody else sees them until the commit', async () => {
  let seenInside = 0;
  let seenOutside = -1;
  await store.unitOfWork.run(async (sql) => {
    await store.appendToStream('brain-1', [newEvent()]);
    await store.appendToStream('brain-1', [newEvent()], { expectedRevision: 0n });
    seenInside = (await store.readStream('brain-1')).length;
    seenOutside = (await outside.readStream('brain-1')).length;
    await sql.query({ text: 'INSERT INTO uow_side_effects (note) VALUES ($1)', values: ['with the events'] });
  });
  expect({ seenInside, seenOutside }).toEqual({ seenInside: 2, seenOutside: 0 });
  expect(await outside.readStream('brain-1')).toHaveLength(2);
  expect((await store.pool.query('SELECT note FROM uow_side_effects')).rows).toEqual([
    { note: 'with the events' },
  ]);
});

test('a throw rolls back the appends and the other writes together', async () => {
  const failure = new Error('handler failed');
  await expect(
    store.unitOfWork.run(async (sql) => {
      await store.appendToStream('brain-1', [newEvent()]);
      await sql.query({ text: 'INSERT INTO uow_side_effects (note) VALUES ($1)', values: ['lost'] });
      throw failure;
    }),
  ).rejects.toBe(failure);
  expect(await store.readStream('brain-1')).toEqual([]);
  expect((await store.pool.query('SELECT count(*)::int AS n FROM uow_side_effects')).rows).toEqual([
    { n: 0 },
  ]);
});

test('a run inside a run joins it: one transaction, one outcome', async () => {
  await expect(
    store.unitOfWork.run(async () => {
      await store.unitOfWork.run(() => store.appendToStream('brain-1', [newEvent()]));
      expect(await outside.readStream('brain-1')).toEqual([]); // the inner run did not commit
      throw new Error('outer fails');
    }),
  ).rejects.toThrow('outer fails');
  expect(await store.readStream('brain-1')).toEqual([]);
});

test('work the unit left running uses the pool afterwards, never the released connection', async () => {
  let late: Promise<unknown> | undefined;
  await store.unitOfWork.run(async () => {
    await store.appendToStream('brain-1', [newEvent()]);
    late = new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
      store.appendToStream('brain-2', [newEvent()]),
    );
  });
  await late;
  expect(await outside.readStream('brain-2')).toHaveLength(1);
});

test('an append that would sort before a younger transaction’s event in its stream is refused, and a rerun succeeds', async () => {
  let holdsId!: () => void;
  const idAssigned = new Promise<void>((resolve) => (holdsId = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const older = store.unitOfWork.run(async () => {
    await store.appendToStream('first', [newEvent()]); // the transaction id is assigned here
    holdsId();
    await gate;
    await store.appendToStream('shared', [newEvent()]);
  });
  await idAssigned;
  const younger = await outside.appendToStream('shared', [newEvent()]);
  release();
  await expect(older).rejects.toBeInstanceOf(UnitOfWorkConflictError);
  expect(await outside.readStream('first')).toEqual([]); // rolled back as a whole

  await store.unitOfWork.run(async () => {
    await store.appendToStream('first', [newEvent()]);
    await store.appendToStream('shared', [newEvent()]);
  });
  const shared = await outside.readStream('shared');
  expect(shared).toHaveLength(2);
  expect(comparePositions(shared[0]!.position, younger.position)).toBe(0);
  expect(comparePositions(shared[0]!.position, shared[1]!.position)).toBeLessThan(0);
});

test('two units locking two streams in opposite orders: one is told to retry, the other commits', async () => {
  // Each unit holds its first stream's lock before either asks for its second.
  let bothHoldOne!: () => void;
  let holding = 0;
  const barrier = new Promise<void>((resolve) => (bothHoldOne = resolve));
  const unit = (a: string, b: string) =>
    store.unitOfWork.run(async () => {
      await store.appendToStream(a, [newEvent()]);
      if (++holding === 2) bothHoldOne();
      await barrier;
      await store.appendToStream(b, [newEvent()]);
    });
  const outcomes = await Promise.allSettled([unit('left', 'right'), unit('right', 'left')]);
  const failures = outcomes.filter((o) => o.status === 'rejected');
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  expect(failures).toHaveLength(1);
  expect((failures[0] as PromiseRejectedResult).reason).toBeInstanceOf(UnitOfWorkConflictError);
  expect((await outside.readStream('left')).length + (await outside.readStream('right')).length).toBe(2);
});

test('a unit waiting for a stream lock is really blocked by the holder (appends serialise per stream)', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const holder = store.unitOfWork.run(async () => {
    await store.appendToStream('contended', [newEvent()]);
    await gate;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const waiter = outside.appendToStream('contended', [newEvent()], { expectedRevision: 'no_stream' });
  expect(await stillPending(waiter)).toBe(true);
  release();
  await holder;
  await expect(waiter).rejects.toThrow(/expected revision no_stream/);
});

test('the transaction begins at the first statement, running onBegin first; work with none begins nothing', async () => {
  const steps: string[] = [];
  const onBegin = async (sql: SqlExecutor) => {
    steps.push('onBegin');
    await sql.query({ text: 'SELECT 1' });
  };
  await store.unitOfWork.run(
    async () => {
      steps.push('work started');
      steps.push(`connections in use: ${store.pool.totalCount - store.pool.idleCount}`);
      await store.appendToStream('brain-1', [newEvent()]);
      steps.push('appended');
    },
    { onBegin },
  );
  expect(steps).toEqual(['work started', 'connections in use: 0', 'onBegin', 'appended']);

  const untouched = jest.fn(() => Promise.resolve());
  expect(await store.unitOfWork.run(() => Promise.resolve('no statements'), { onBegin: untouched })).toBe(
    'no statements',
  );
  expect(untouched).not.toHaveBeenCalled();
});

test("read: one statement of its own outside a run (no BEGIN), the run's transaction inside one", async () => {
  // A statement in a transaction begun before it started later than the transaction.
  const ownTransaction = (sql: SqlExecutor) =>
    sql
      .query<{ own: boolean }>({
        text: 'SELECT xact_start = query_start AS own FROM pg_stat_activity WHERE pid = pg_backend_pid()',
      })
      .then(({ rows }) => rows[0]!.own);
  expect(await store.unitOfWork.read(ownTransaction)).toBe(true);
  await store.unitOfWork.run(async (sql) => {
    await sql.query({ text: 'SELECT pg_sleep(0.01)' });
    expect(await store.unitOfWork.read(ownTransaction)).toBe(false);
  });
});

test('when onBegin throws, run rejects with its error, whatever the work made of it, and nothing commits', async () => {
  const verdict = new Error('no longer wanted');
  const outcome = store.unitOfWork.run(
    async (sql) => {
      try {
        await store.appendToStream('brain-1', [newEvent()]);
      } catch {
        // a careless handler swallowing the failure and carrying on
      }
      await sql.query({ text: 'INSERT INTO uow_side_effects (note) VALUES ($1)', values: ['ignored'] });
      return 'done';
    },
    { onBegin: () => Promise.reject(verdict) },
  );
  await expect(outcome).rejects.toBe(verdict);
  expect(await store.readStream('brain-1')).toEqual([]);
  expect((await store.pool.query('SELECT count(*)::int AS n FROM uow_side_effects')).rows).toEqual([
    { n: 0 },
  ]);
});

test('effects after commit run once it committed; effects after rollback only when it rolled back', async () => {
  const effects: string[] = [];
  const note = (text: string) => () => {
    effects.push(text);
    return Promise.resolve();
  };
  await store.unitOfWork.run(async () => {
    await store.appendToStream('file-1', [newEvent()]);
    await store.unitOfWork.afterCommit(note('delete the replaced file'));
    store.unitOfWork.afterRollback(note('delete the new file'));
    expect(effects).toEqual([]); // not before the commit
  });
  expect(effects).toEqual(['delete the replaced file']);

  effects.length = 0;
  await expect(
    store.unitOfWork.run(async () => {
      await store.appendToStream('file-2', [newEvent()]);
      await store.unitOfWork.afterCommit(note('delete the replaced file'));
      store.unitOfWork.afterRollback(note('delete the new file'));
      throw new Error('a concurrent duplicate won');
    }),
  ).rejects.toThrow('a concurrent duplicate won');
  expect(effects).toEqual(['delete the new file']);
  expect(await outside.readStream('file-2')).toEqual([]);

  effects.length = 0;
  await store.unitOfWork.afterCommit(note('outside a unit of work: at once'));
  store.unitOfWork.afterRollback(note('outside: never'));
  expect(effects).toEqual(['outside a unit of work: at once']);
});

test('a connection cut between two statements fails the run, not the process, and is not reused', async () => {
  let pid = 0;
  const run = store.unitOfWork.run(async (sql) => {
    const { rows } = await sql.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' });
    pid = rows[0]!.pid;
    // The server ends the connection while no statement of the work runs: pg reports it as an
    // 'error' event on the checked-out client, which nobody but the unit of work listens to.
    await outside.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await sql.query({ text: 'SELECT 1' });
  });
  await expect(run).rejects.toThrow();
  const { rows } = await store.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  expect(rows[0]!.pid).not.toBe(pid);
  await store.unitOfWork.run(async () => {
    await store.appendToStream('after-the-cut', [newEvent()]);
  });
  expect(await store.readStream('after-the-cut')).toHaveLength(1);
});

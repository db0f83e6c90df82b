import type { BlobStore } from '#shared/blobStore/blobStore';
import type { EventStore } from '#shared/eventStore/eventStore';
import { withStoredFile } from './withStoredFile';

function setUp() {
  const deleted: string[] = [];
  const onRollback: (() => Promise<void>)[] = [];
  const blobs = { delete: (key: string) => Promise.resolve(void deleted.push(key)) } as unknown as BlobStore;
  const store = {
    unitOfWork: { afterRollback: (effect: () => Promise<void>) => onRollback.push(effect) },
  } as unknown as EventStore;
  return { deps: { store, blobs }, deleted, rollBack: () => Promise.all(onRollback.map((e) => e())) };
}

test('the file stays when the work succeeds, and goes if its unit of work rolls back later', async () => {
  const { deps, deleted, rollBack } = setUp();
  expect(await withStoredFile(deps, 'uploads/a', () => Promise.resolve('recorded'))).toBe('recorded');
  expect(deleted).toEqual([]);
  await rollBack();
  expect(deleted).toEqual(['uploads/a']);
});

test('the file goes when the work fails, and the failure is what the caller sees', async () => {
  const { deps, deleted, rollBack } = setUp();
  await expect(withStoredFile(deps, 'uploads/b', () => Promise.reject(new Error('refused')))).rejects.toThrow(
    'refused',
  );
  expect(deleted).toEqual(['uploads/b']);
  await rollBack(); // nothing was registered for a failed work
  expect(deleted).toEqual(['uploads/b']);
});

test('without a stored file the work just runs', async () => {
  const { deps, deleted, rollBack } = setUp();
  await expect(withStoredFile(deps, undefined, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
  await withStoredFile(deps, undefined, () => Promise.resolve(1));
  await rollBack();
  expect(deleted).toEqual([]);
});

import { loadOnce } from './loadOnce';

it('loads once for every caller, and again after a load that failed', async () => {
  let calls = 0;
  let fail = true;
  const load = loadOnce(() => {
    calls++;
    return fail ? Promise.reject(new Error('not yet')) : Promise.resolve(calls);
  });
  await expect(load()).rejects.toThrow('not yet');
  fail = false;
  const [a, b] = await Promise.all([load(), load()]);
  expect([a, b, await load()]).toEqual([2, 2, 2]);
  expect(calls).toBe(2);
});

import { HEAP_GROWING_PERCENT, tuneHeapGrowth } from './heapGrowth';

test('the heap growth flag is set unless the operator set it, as a node option or in NODE_OPTIONS', () => {
  expect(HEAP_GROWING_PERCENT).toBeGreaterThan(0);
  expect(tuneHeapGrowth(['--heap-growing-percent=50'], '')).toBe(false);
  expect(tuneHeapGrowth([], '--max-old-space-size=4096 --heap_growing_percent=80')).toBe(false);
  expect(tuneHeapGrowth(['--enable-source-maps'], '--max-old-space-size=4096')).toBe(true);
});

import { PendingUploads } from '#services/processor/pendingUploads';
import { type SlotSettings, Slots } from '#services/processor/slots';
import { at, uploadEvents } from './support/uploadEvents';

const { received } = uploadEvents(0);

const KB = 1024;
const GB = 1024 ** 3;
/** As on a two-core machine: one slot for any upload, one more for uploads up to 8 MB. */
const TWO_CORES: SlotSettings = { concurrency: 1, smallUploadSlots: 1, smallUploadMaxBytes: 8 * 1024 * KB };

function setUp(settings: SlotSettings = TWO_CORES) {
  const pending = new PendingUploads(at(0));
  const slots = new Slots(settings);
  const fill = () => slots.fill(pending, 0).map(({ upload, lane }) => `${upload.uploadId}@${lane}`);
  return { pending, slots, fill };
}

test("with one slot for any upload, a small upload starts while big ones hold it, another user's backlog included", () => {
  const { pending, slots, fill } = setUp();
  pending.observe([received('a1', 1, 5 * GB), received('a2', 1, 5 * GB), received('a3', 1, 5 * GB)]);
  expect(fill()).toEqual(['a1@any']);
  pending.observe([received('b', 2, 1 * KB)]);
  expect(fill()).toEqual(['b@small']);
  expect(slots.load(pending, 0)).toEqual({ waiting: { small: 0, large: 2 }, running: { small: 1, any: 1 } });
  // Both slots busy: nothing to wake up for until one is released.
  expect(slots.nextDue(pending)).toBeUndefined();
  slots.release('b');
  pending.forget('b');
  pending.observe([received('c', 3, 2 * KB)]);
  expect(fill()).toEqual(['c@small']);
});

test('a big upload in the slot for any size leaves the small slot to a small one', () => {
  const { pending, fill } = setUp();
  pending.observe([received('a-big', 1, 5 * GB), received('b-small', 2, KB), received('c-small', 3, KB)]);
  expect(fill()).toEqual(['a-big@any', 'b-small@small']);
});

test('small uploads alone run in every slot, and a big one waits for the slot of any size only', () => {
  const { pending, slots, fill } = setUp({ ...TWO_CORES, smallUploadSlots: 3 });
  pending.observe([
    received('a', 1, KB),
    received('b', 2, KB),
    received('c', 3, KB),
    received('d', 4, KB),
    received('e', 5, KB),
    received('f-big', 6, 5 * GB),
  ]);
  expect(fill()).toEqual(['a@any', 'b@small', 'c@small', 'd@small']);
  expect(slots.nextDue(pending)).toBeUndefined();
  expect(slots.load(pending, 0)).toEqual({ waiting: { small: 1, large: 1 }, running: { small: 3, any: 1 } });
  // A small slot freed takes the next small upload, never the big one.
  slots.release('b');
  pending.forget('b');
  expect(fill()).toEqual(['e@small']);
  slots.release('c');
  pending.forget('c');
  expect(fill()).toEqual([]);
  expect(slots.nextDue(pending)).toBeUndefined();
  // The slot for any size freed: the big upload's turn.
  slots.release('a');
  pending.forget('a');
  expect(fill()).toEqual(['f-big@any']);
  pending.observe([received('a2', 1, KB)]);
  expect(fill()).toEqual(['a2@small']);
});

test('a big upload never takes a small slot, and a free small slot does not wake the processor for it', () => {
  const { pending, slots, fill } = setUp();
  pending.observe([received('a1', 1, 5 * GB), received('a2', 1, 5 * GB)]);
  expect(fill()).toEqual(['a1@any']);
  expect(fill()).toEqual([]);
  expect(slots.nextDue(pending)).toBeUndefined();
  slots.release('a1');
  expect(slots.nextDue(pending)).toBe(0);
});

test('with no slot kept for small uploads, a small one waits for the slot like any other', () => {
  const { pending, slots, fill } = setUp({ ...TWO_CORES, smallUploadSlots: 0 });
  pending.observe([received('a1', 1, 5 * GB), received('b', 2, KB)]);
  expect(fill()).toEqual(['a1@any']);
  expect(slots.load(pending, 0)).toEqual({ waiting: { small: 1, large: 0 }, running: { small: 0, any: 1 } });
});

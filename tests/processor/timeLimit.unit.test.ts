import { inspectionTimeLimitSeconds } from '#services/processor/timeLimit';
import { timedOutReason } from '#services/processor/processUpload';

const DEFAULTS = { timeoutSeconds: 600, timeoutBaseSeconds: 20, timeoutPerGibSeconds: 300 };
const MB = 1024 ** 2;
const GB = 1024 ** 3;

test('a small file gets the base, a big one the base plus its share per GiB, none more than the cap', () => {
  expect(inspectionTimeLimitSeconds(DEFAULTS, 1024)).toBe(20);
  expect(inspectionTimeLimitSeconds(DEFAULTS, 8 * MB)).toBe(22);
  expect(inspectionTimeLimitSeconds(DEFAULTS, 0)).toBe(20);
  expect(inspectionTimeLimitSeconds(DEFAULTS, 512 * MB)).toBe(170);
  expect(inspectionTimeLimitSeconds(DEFAULTS, 1 * GB)).toBe(320);
  expect(inspectionTimeLimitSeconds(DEFAULTS, 5 * GB)).toBe(600);
  expect(inspectionTimeLimitSeconds({ ...DEFAULTS, timeoutSeconds: 10 }, 1024)).toBe(10);
  expect(inspectionTimeLimitSeconds({ ...DEFAULTS, timeoutPerGibSeconds: 0 }, 5 * GB)).toBe(20);
});

test('the reason of a timed-out upload says it was stopped, not retried, and what to check', () => {
  expect(timedOutReason(12.5 * MB, 24)).toBe(
    'processing was stopped after 24 s, the time allowed for a file of 12.5 MB, and was not retried ' +
      '(it would take as long again): the file is probably malformed, or expands far beyond its size ' +
      'when decompressed. Check that it opens in an image viewer; if it does, upload it uncompressed, ' +
      'which is allowed more time',
  );
  expect(timedOutReason(900, 20)).toContain('a file of 900 bytes');
});

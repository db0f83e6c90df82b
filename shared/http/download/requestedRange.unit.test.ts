import { requestedRange } from './requestedRange';

describe('requestedRange', () => {
  test.each([
    ['bytes=0-0', { kind: 'part', start: 0, end: 0 }],
    ['bytes=10-19', { kind: 'part', start: 10, end: 19 }],
    ['bytes=90-', { kind: 'part', start: 90, end: 99 }],
    ['bytes=90-1000', { kind: 'part', start: 90, end: 99 }],
    ['bytes=-10', { kind: 'part', start: 90, end: 99 }],
    ['bytes=-1000', { kind: 'part', start: 0, end: 99 }],
    ['BYTES= 5-6 ', { kind: 'part', start: 5, end: 6 }],
  ])('%s of 100 bytes', (header, expected) => expect(requestedRange(header, 100)).toEqual(expected));

  test.each(['bytes=100-', 'bytes=100-200', 'bytes=-0'])('%s of 100 bytes is unsatisfiable', (header) =>
    expect(requestedRange(header, 100)).toEqual({ kind: 'unsatisfiable' }),
  );

  test('any range of an empty file is unsatisfiable', () => {
    expect(requestedRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(requestedRange('bytes=-5', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  test.each([
    undefined,
    '',
    'bytes=',
    'bytes=-',
    'bytes=9-1',
    'bytes=a-b',
    'items=0-1',
    'bytes=0-1,3-4',
    'bytes=1.5-2',
  ])('%j is answered with the whole file', (header) =>
    expect(requestedRange(header, 100)).toEqual({ kind: 'whole' }),
  );
});

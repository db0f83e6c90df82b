import { overallProgress } from '#cli/output/overallProgress';

describe('overallProgress (not a terminal: plain lines)', () => {
  let now = 0;
  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(() => jest.restoreAllMocks());

  const progress = () => {
    const lines: string[] = [];
    const stream = {
      write: (text: string) => {
        lines.push(...text.split('\n').filter(Boolean));
        return true;
      },
    } as unknown as NodeJS.WritableStream;
    return { lines, progress: overallProgress({ interactive: false, stream, plainEveryMs: 10_000 }) };
  };

  it('a line per finished file (several files) and at most one per interval while bytes move', () => {
    const { lines, progress: p } = progress();
    p.add('a', 1024);
    p.add('b', 2048);
    p.add('c', 1024);
    p.update('a', 0);
    p.update('a', 512);
    expect(lines).toEqual([]); // within the interval
    now += 10_000;
    p.update('a', 1024);
    expect(lines).toEqual(['bic: 0/3 files, 1.0 KiB of 4.0 KiB (25%), 0 B/s, -- left']);
    now += 1000;
    p.finish('a', true);
    p.update('b', 0);
    p.update('b', 2048);
    p.finish('b', false); // its bytes leave the totals
    p.add('c', 1024); // again: no change
    p.update('c', 0);
    p.update('c', 1024);
    p.finish('c', true);
    p.stop();
    p.finish('c', true); // after stop: nothing
    expect(lines).toEqual([
      'bic: 0/3 files, 1.0 KiB of 4.0 KiB (25%), 0 B/s, -- left',
      'bic: 1/3 files, 1.0 KiB of 4.0 KiB (25%), 0 B/s, -- left',
      'bic: 2/3 files, 1.0 KiB of 2.0 KiB (50%), 2.0 KiB/s, 1s left | 1 failed',
      'bic: 3/3 files, 2.0 KiB of 2.0 KiB (100%), 3.0 KiB/s, 0s left | 1 failed',
    ]);
  });

  it('the rate counts bytes moved in this run, not where a resumed file started', () => {
    const { lines, progress: p } = progress();
    p.add('a', 10 * 1024);
    p.add('b', 10 * 1024);
    p.update('a', 4096); // a resume: starts at 4 KiB
    now += 10_000;
    p.update('a', 6144);
    now += 2000;
    p.update('a', 10 * 1024);
    p.finish('a', true);
    expect(lines).toEqual([
      'bic: 0/2 files, 6.0 KiB of 20.0 KiB (30%), 0 B/s, -- left',
      'bic: 1/2 files, 10.0 KiB of 20.0 KiB (50%), 2.0 KiB/s, 5s left', // 4 KiB in 2 s
    ]);
  });
});

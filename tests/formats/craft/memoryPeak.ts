/** What running `work` cost: its CPU time, and how far memory rose above where it started. */
export interface Cost<T> {
  readonly result: T;
  /**
   * CPU seconds the process spent meanwhile (every thread, user and system): the work's cost,
   * which a busy machine does not inflate as it does the time on the clock.
   */
  readonly cpuSeconds: number;
  /** Highest growth seen of rss and of arrayBuffers (Buffers live off the V8 heap), in MiB. */
  readonly rssMiB: number;
  readonly arrayBuffersMiB: number;
}

/**
 * Samples memory every 5 ms while `work` runs and once after it (a synchronous inflate blocks the
 * sampler, but what it allocated is still there when it returns), and reads the process's peak RSS
 * (getrusage) before and after, which no sampling gap can miss.
 */
export async function measureCost<T>(work: () => Promise<T>): Promise<Cost<T>> {
  const start = process.memoryUsage();
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  let rss = 0;
  let arrayBuffers = 0;
  const sample = (): void => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss - start.rss);
    arrayBuffers = Math.max(arrayBuffers, now.arrayBuffers - start.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  const cpuBefore = process.cpuUsage();
  try {
    const result = await work();
    sample();
    const peakGrowth = process.resourceUsage().maxRSS * 1024 - peakBefore;
    return {
      result,
      cpuSeconds: cpuSecondsSince(cpuBefore),
      rssMiB: Math.max(rss, peakGrowth) / 2 ** 20,
      arrayBuffersMiB: arrayBuffers / 2 ** 20,
    };
  } finally {
    clearInterval(timer);
  }
}

function cpuSecondsSince(before: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1e6;
}

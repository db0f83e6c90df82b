/**
 * Runs `run` for askers who need an answer that started after they asked (a read covering every
 * write committed before the ask): at most one run in flight and one queued. An ask during a run
 * waits for the next run, never the one in flight; askers arriving together share it, which keeps
 * a read asked by every request cheap under load.
 */
export class FreshRun<T> {
  private inFlight: Promise<T> | undefined;
  private queued: Promise<T> | undefined;

  constructor(private readonly run: () => Promise<T>) {}

  ask(): Promise<T> {
    if (!this.inFlight) {
      const started = this.run().finally(() => {
        if (this.inFlight === started) this.inFlight = undefined;
      });
      this.inFlight = started;
      return started;
    }
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.ask();
      });
    return this.queued;
  }
}

/**
 * Everything the benchmark starts registers how to undo it here. The stack runs in reverse order
 * once: at the end, on an error, or on SIGINT/SIGTERM, so an interrupted run leaves nothing behind.
 */
export class Cleanup {
  private readonly steps: { name: string; undo: () => Promise<void> | void }[] = [];
  private running: Promise<void> | undefined;
  /** Set by a signal: work still in flight then fails as its resources go, which is no news. */
  interrupted = false;

  /** Returns a function that undoes this step early (once) and takes it off the stack. */
  defer(name: string, undo: () => Promise<void> | void): () => Promise<void> {
    const step = { name, undo };
    this.steps.push(step);
    return async () => {
      const index = this.steps.indexOf(step);
      if (index < 0) return;
      this.steps.splice(index, 1);
      await undo();
    };
  }

  run(): Promise<void> {
    this.running ??= this.unwind();
    return this.running;
  }

  /** On a signal: clean up, then exit with the conventional 128 + signal number. */
  onSignals(): void {
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      process.once(signal, () => {
        this.interrupted = true;
        process.stderr.write(`\n${signal}: cleaning up\n`);
        void this.run().finally(() => process.exit(code));
      });
    }
  }

  private async unwind(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.undo();
      } catch (error) {
        process.stderr.write(`cleanup of ${step.name} failed: ${String(error)}\n`);
      }
    }
  }
}

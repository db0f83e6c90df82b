/** One page of a paged source; `done` when nothing follows it. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly done: boolean;
}

/**
 * A paged source read one page ahead, with two items in view (the current one and the next, across
 * page boundaries). The next page is requested as soon as a page arrives, so the database works on
 * it while the caller processes this one.
 */
export class PagedLookahead<T> {
  private items: readonly T[] = [];
  private index = 0;
  private pending: Promise<Page<T>> | undefined;

  constructor(private readonly fetch: (last: T | undefined) => Promise<Page<T>>) {
    this.pending = this.request(undefined);
  }

  /** Fewer than two items in view while more may come: call fill() before peeking. */
  needsFill(): boolean {
    return this.items.length - this.index < 2 && this.pending !== undefined;
  }

  async fill(): Promise<void> {
    while (this.needsFill()) {
      const page = await this.pending!;
      this.items = this.items.slice(this.index).concat(page.items);
      this.index = 0;
      const last = page.items[page.items.length - 1];
      this.pending = page.done || last === undefined ? undefined : this.request(last);
    }
  }

  /** The item `ahead` places from the current one (0 or 1), undefined past the end. */
  peek(ahead: 0 | 1): T | undefined {
    return this.items[this.index + ahead];
  }

  shift(): void {
    this.index++;
  }

  /** Reads to the end, counting the items left (the current one included). */
  async drain(): Promise<number> {
    let count = this.items.length - this.index;
    this.items = [];
    this.index = 0;
    while (this.pending) {
      const page = await this.pending;
      count += page.items.length;
      const last = page.items[page.items.length - 1];
      this.pending = page.done || last === undefined ? undefined : this.request(last);
    }
    return count;
  }

  /** Stops reading: waits for the page being read, if any, without looking at it. */
  async settle(): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    await pending?.catch(() => undefined);
  }

  private request(last: T | undefined): Promise<Page<T>> {
    const pending = this.fetch(last);
    // Left unread when the caller stops early: its failure must not surface as an unhandled rejection.
    pending.catch(() => undefined);
    return pending;
  }
}

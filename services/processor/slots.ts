import type { Busy, Fits, PendingUpload, PendingUploads } from './pendingUploads';

/** A slot kept for small uploads, or one for uploads of any size. */
export type Lane = 'small' | 'any';

export interface SlotSettings {
  /** Slots for uploads of any size. */
  readonly concurrency: number;
  /** Slots beside those for uploads of at most `smallUploadMaxBytes`, open while big ones run. */
  readonly smallUploadSlots: number;
  readonly smallUploadMaxBytes: number;
}

export interface Picked {
  readonly upload: PendingUpload;
  readonly lane: Lane;
}

/** For the metrics: uploads due and waiting for a slot, by size; uploads running, by lane. */
export interface SlotLoad {
  readonly waiting: Readonly<Record<'small' | 'large', number>>;
  readonly running: Readonly<Record<Lane, number>>;
}

/** The slots for any size are filled first: the small slots open for the big uploads among them. */
const LANES: readonly Lane[] = ['any', 'small'];
const anyUpload: Fits = () => true;

interface Running {
  readonly lane: Lane;
  readonly small: boolean;
}

/**
 * The processor's slots: `concurrency` for uploads of any size, and up to `smallUploadSlots` for
 * small ones, one open for each slot of any size that a big upload holds. However long the
 * inspections of big files take (on a two-core machine, the one slot of any size), a small upload
 * waits only for the small ones picked before it, each of which has a short time limit. Unless big
 * uploads run, no more run at once than `concurrency`: the extra threads only inspect small files.
 * In every slot the uploaders take turns (PendingUploads.take).
 */
export class Slots implements Busy {
  private readonly running = new Map<string, Running>();

  constructor(private readonly settings: SlotSettings) {}

  readonly isSmall: Fits = (upload) => upload.sizeBytes <= this.settings.smallUploadMaxBytes;

  has(uploadId: string): boolean {
    return this.running.has(uploadId);
  }

  /** Fills the free slots with uploads due at `now`, which count as running until released. */
  fill(pending: PendingUploads, now: number): Picked[] {
    const picked: Picked[] = [];
    for (const lane of LANES)
      for (const upload of pending.take(now, this, this.free(lane), this.fits(lane))) {
        this.running.set(upload.uploadId, { lane, small: this.isSmall(upload) });
        picked.push({ upload, lane });
      }
    return picked;
  }

  /** The upload's turn ended: its slot is free. */
  release(uploadId: string): void {
    this.running.delete(uploadId);
  }

  /** When the next upload a free slot could take becomes due (undefined: none, or no free slot). */
  nextDue(pending: PendingUploads): number | undefined {
    const open = LANES.filter((lane) => this.free(lane) > 0).map((lane) => this.fits(lane));
    if (open.length === 0) return undefined;
    return pending.nextDue(this, (upload) => open.some((fits) => fits(upload)));
  }

  load(pending: PendingUploads, now: number): SlotLoad {
    const waiting = { small: 0, large: 0 };
    for (const upload of pending.waiting(now, this)) waiting[this.isSmall(upload) ? 'small' : 'large'] += 1;
    return { waiting, running: { small: this.inLane('small'), any: this.inLane('any') } };
  }

  private free(lane: Lane): number {
    const open =
      lane === 'any'
        ? this.settings.concurrency
        : Math.min(
            this.settings.smallUploadSlots,
            this.count((job) => job.lane === 'any' && !job.small),
          );
    return Math.max(0, open - this.inLane(lane));
  }

  private inLane(lane: Lane): number {
    return this.count((job) => job.lane === lane);
  }

  private count(which: (job: Running) => boolean): number {
    let count = 0;
    for (const job of this.running.values()) if (which(job)) count += 1;
    return count;
  }

  private fits(lane: Lane): Fits {
    return lane === 'small' ? this.isSmall : anyUpload;
  }
}

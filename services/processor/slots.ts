import type { Busy, Fits, PendingUpload, PendingUploads } from './pendingUploads';

/** A slot kept for small uploads, or one for uploads of any size. */
export type Lane = 'small' | 'any';

export interface SlotSettings {
  /** Slots for uploads of any size. */
  readonly concurrency: number;
  /** Slots beside those for uploads of at most `smallUploadMaxBytes`, always open. */
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

/** The slots for any size are filled first, then the small slots with the small uploads left. */
const LANES: readonly Lane[] = ['any', 'small'];
const anyUpload: Fits = () => true;

/**
 * The processor's slots: `concurrency` for uploads of any size, and `smallUploadSlots` more for
 * small ones. However long the inspections of big files take (on a two-core machine, the one slot
 * of any size), a small upload waits only for the small ones picked before it, each of which has a
 * short time limit. Big files, whose inspections take the memory and the CPU, never run more at
 * once than `concurrency`; small ones run in every slot: inspecting a small file is mostly waiting
 * (for the blob store, the event store), so a bulk import of small scans goes as fast as the
 * slots allow rather than one at a time. In every slot the uploaders take turns
 * (PendingUploads.take).
 */
export class Slots implements Busy {
  private readonly running = new Map<string, Lane>();

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
        this.running.set(upload.uploadId, lane);
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
    const open = lane === 'any' ? this.settings.concurrency : this.settings.smallUploadSlots;
    return Math.max(0, open - this.inLane(lane));
  }

  private inLane(lane: Lane): number {
    let count = 0;
    for (const each of this.running.values()) if (each === lane) count += 1;
    return count;
  }

  private fits(lane: Lane): Fits {
    return lane === 'small' ? this.isSmall : anyUpload;
  }
}

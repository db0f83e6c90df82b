import { type GlobalPosition, type RecordedEvent, comparePositions } from '#shared/eventStore/eventStore';
import {
  type UploadEvent,
  type UploadReceivedData,
  type UploadState,
  uploadDecider,
} from '#shared/domain/uploads/events';

/** An upload not yet completed, failed or deleted, as far as the events seen so far say. */
export interface PendingUpload {
  readonly uploadId: string;
  readonly blobKey: string;
  readonly filename: string;
  readonly sizeBytes: number;
  /** Whose it is: uploaders take turns. */
  readonly uploaderId: number;
  /** Milliseconds: not worth trying before (a claim's lease runs until then). */
  notBefore: number;
  /** The position just before its UploadReceived: resuming after it delivers the upload again. */
  readonly resumeAfter: GlobalPosition;
  /** Milliseconds: when it was received (its UploadReceived was recorded). */
  readonly receivedAt: number;
  /**
   * Its UploadReceived while that is the last event of its stream seen here (and carries no sidecar,
   * which could be large): the claim decides on it without reading the stream (knownStream).
   */
  received: { readonly data: UploadReceivedData; readonly revision: bigint } | undefined;
}

/**
 * The upload's stream as far as the events seen here tell (its UploadReceived only), for a claim
 * that need not read it; undefined when unknown. A stream that moved on since makes the claim's
 * append fail, and the claim then reads it.
 */
export function knownStream(
  upload: PendingUpload,
): { readonly state: UploadState; readonly revision: bigint } | undefined {
  if (!upload.received) return undefined;
  const state = uploadDecider.evolve(uploadDecider.initialState(), {
    type: 'UploadReceived',
    data: upload.received.data,
  });
  return { state, revision: upload.received.revision };
}

const UPLOAD_EVENT_TYPES: ReadonlySet<string> = new Set<UploadEvent['type']>([
  'UploadReceived',
  'UploadDeleted',
  'UploadProcessingStarted',
  'UploadProcessingLeaseRenewed',
  'UploadProcessingCompleted',
  'UploadProcessingFailed',
]);

/** Which uploads a caller can use (a slot's size limit). */
export type Fits = (upload: PendingUpload) => boolean;

/** Which uploads are taken (running here): skipped when picking. */
export interface Busy {
  has(uploadId: string): boolean;
}

/** An uploader with unfinished uploads: how many, and when it last had a turn (0: not yet). */
interface Uploader {
  pending: number;
  turn: number;
}

/**
 * The work the events announce: uploads received and not finished, in the global order they were
 * received. Fed every event of the global order from a checkpoint on; `checkpoint()` is where a
 * restart must resume so that no unfinished upload is missed (before the oldest unfinished one,
 * else after the last event seen). Whether an upload can really be claimed is decided on its stream.
 * Uploaders take turns (`take`), so one who queued many uploads does not hold back the others.
 */
export class PendingUploads {
  private readonly pending = new Map<string, PendingUpload>();
  private readonly uploaders = new Map<number, Uploader>();
  private turns = 0;
  private lastSeen: GlobalPosition;

  constructor(startAfter: GlobalPosition) {
    this.lastSeen = startAfter;
  }

  /** Applies a batch of the global order; resolves nothing, changes only this set. */
  observe(events: readonly RecordedEvent[]): void {
    for (const recorded of events) {
      if (UPLOAD_EVENT_TYPES.has(recorded.type))
        this.apply({ type: recorded.type, data: recorded.data } as UploadEvent, recorded);
      this.lastSeen = recorded.position;
    }
  }

  private apply(event: UploadEvent, recorded: RecordedEvent): void {
    switch (event.type) {
      case 'UploadReceived': {
        const { uploadId, blobKey, filename, sizeBytes, uploaderId } = event.data;
        if (this.pending.has(uploadId)) return;
        const received = event.data.sidecar
          ? undefined
          : { data: event.data, revision: recorded.streamRevision };
        this.pending.set(uploadId, {
          uploadId,
          blobKey,
          filename,
          sizeBytes,
          uploaderId,
          notBefore: 0,
          resumeAfter: this.lastSeen,
          receivedAt: Date.parse(recorded.metadata.recordedAt),
          received,
        });
        const uploader = this.uploaders.get(uploaderId);
        if (uploader) uploader.pending += 1;
        else this.uploaders.set(uploaderId, { pending: 1, turn: 0 });
        return;
      }
      case 'UploadProcessingStarted':
      case 'UploadProcessingLeaseRenewed': {
        const entry = this.pending.get(event.data.uploadId);
        if (entry) entry.received = undefined; // its stream has moved on
        this.deferUntilLease(event.data.uploadId, Date.parse(event.data.leaseUntil));
        return;
      }
      default:
        this.forget(event.data.uploadId);
    }
  }

  /** The upload is held (by a lease, or a fault) until `time`: not worth trying before. */
  deferUntilLease(uploadId: string, time: number): void {
    const entry = this.pending.get(uploadId);
    if (entry && Number.isFinite(time)) entry.notBefore = time;
  }

  /** Its stream says it is finished or gone. */
  forget(uploadId: string): void {
    const entry = this.pending.get(uploadId);
    if (!entry) return;
    this.pending.delete(uploadId);
    const uploader = this.uploaders.get(entry.uploaderId);
    // An uploader with nothing left leaves the round; coming back, it is next in line again.
    if (uploader && --uploader.pending === 0) this.uploaders.delete(entry.uploaderId);
  }

  has(uploadId: string): boolean {
    return this.pending.has(uploadId);
  }

  get size(): number {
    return this.pending.size;
  }

  /**
   * Up to `limit` uploads due at `now` that are not `busy` and that `fits` accepts, the uploaders
   * taking turns: first the one whose last turn is longest ago (one that had none yet before any
   * other), one upload each per round, each uploader's oldest first. The uploaders taken have had
   * their turn.
   */
  take(now: number, busy: Busy, limit: number, fits: Fits = always): PendingUpload[] {
    if (limit <= 0) return [];
    const queues = new Map<number, PendingUpload[]>();
    for (const entry of this.waiting(now, busy, fits)) {
      const queue = queues.get(entry.uploaderId);
      if (!queue) queues.set(entry.uploaderId, [entry]);
      else if (queue.length < limit) queue.push(entry);
    }
    // A stable sort: uploaders with no turn yet keep the order of their oldest upload.
    const order = [...queues.keys()].sort((a, b) => this.turnOf(a) - this.turnOf(b));
    const taken: PendingUpload[] = [];
    for (let round = 0; taken.length < limit; round++) {
      const before = taken.length;
      for (const uploaderId of order) {
        const entry = queues.get(uploaderId)?.[round];
        if (!entry || taken.length >= limit) continue;
        taken.push(entry);
        const uploader = this.uploaders.get(uploaderId);
        if (uploader) uploader.turn = ++this.turns;
      }
      if (taken.length === before) break;
    }
    return taken;
  }

  /** The uploads due at `now`, not `busy`, that `fits` accepts, oldest first. */
  /** Seconds the oldest upload due and not busy has waited since it was received (0: none waits). */
  oldestWaitingSeconds(now: number, busy: Busy): number {
    let oldest = now;
    for (const entry of this.waiting(now, busy))
      if (Number.isFinite(entry.receivedAt)) oldest = Math.min(oldest, entry.receivedAt);
    return (now - oldest) / 1000;
  }

  *waiting(now: number, busy: Busy, fits: Fits = always): Iterable<PendingUpload> {
    for (const entry of this.pending.values())
      if (entry.notBefore <= now && !busy.has(entry.uploadId) && fits(entry)) yield entry;
  }

  /** The earliest time a not-busy upload that `fits` accepts becomes due (undefined when none waits). */
  nextDue(busy: Busy, fits: Fits = always): number | undefined {
    let next: number | undefined;
    for (const entry of this.pending.values())
      if (!busy.has(entry.uploadId) && fits(entry) && (next === undefined || entry.notBefore < next))
        next = entry.notBefore;
    return next;
  }

  private turnOf(uploaderId: number): number {
    return this.uploaders.get(uploaderId)?.turn ?? 0;
  }

  /** Resume after this: every unfinished upload's UploadReceived comes after it. */
  checkpoint(): GlobalPosition {
    let oldest: GlobalPosition | undefined;
    for (const entry of this.pending.values())
      if (oldest === undefined || comparePositions(entry.resumeAfter, oldest) < 0) oldest = entry.resumeAfter;
    return oldest ?? this.lastSeen;
  }
}

const always = (): boolean => true;

import {
  type GlobalPosition,
  type RecordedEvent,
  comparePositions,
} from '../../shared/eventStore/eventStore';
import type { UploadEvent } from '../../shared/domain/uploads/events';

/** An upload not yet completed, failed or deleted, as far as the events seen so far say. */
export interface PendingUpload {
  readonly uploadId: string;
  readonly blobKey: string;
  readonly filename: string;
  readonly sizeBytes: number;
  /** Milliseconds: not worth trying before (a claim's lease runs until then). */
  notBefore: number;
  /** The position just before its UploadReceived: resuming after it delivers the upload again. */
  readonly resumeAfter: GlobalPosition;
}

const UPLOAD_EVENT_TYPES: ReadonlySet<string> = new Set<UploadEvent['type']>([
  'UploadReceived',
  'UploadDeleted',
  'UploadProcessingStarted',
  'UploadProcessingLeaseRenewed',
  'UploadProcessingCompleted',
  'UploadProcessingFailed',
]);

/**
 * The work the events announce: uploads received and not finished, in the global order they were
 * received. Fed every event of the global order from a checkpoint on; `checkpoint()` is where a
 * restart must resume so that no unfinished upload is missed (before the oldest unfinished one,
 * else after the last event seen). Whether an upload can really be claimed is decided on its stream.
 */
export class PendingUploads {
  private readonly pending = new Map<string, PendingUpload>();
  private lastSeen: GlobalPosition;

  constructor(startAfter: GlobalPosition) {
    this.lastSeen = startAfter;
  }

  /** Applies a batch of the global order; resolves nothing, changes only this set. */
  observe(events: readonly RecordedEvent[]): void {
    for (const recorded of events) {
      if (UPLOAD_EVENT_TYPES.has(recorded.type))
        this.apply({ type: recorded.type, data: recorded.data } as UploadEvent);
      this.lastSeen = recorded.position;
    }
  }

  private apply(event: UploadEvent): void {
    switch (event.type) {
      case 'UploadReceived': {
        const { uploadId, blobKey, filename, sizeBytes } = event.data;
        if (!this.pending.has(uploadId))
          this.pending.set(uploadId, {
            uploadId,
            blobKey,
            filename,
            sizeBytes,
            notBefore: 0,
            resumeAfter: this.lastSeen,
          });
        return;
      }
      case 'UploadProcessingStarted':
      case 'UploadProcessingLeaseRenewed':
        this.deferUntilLease(event.data.uploadId, Date.parse(event.data.leaseUntil));
        return;
      default:
        this.pending.delete(event.data.uploadId);
    }
  }

  /** The upload is held (by a lease, or a fault) until `time`: not worth trying before. */
  deferUntilLease(uploadId: string, time: number): void {
    const entry = this.pending.get(uploadId);
    if (entry && Number.isFinite(time)) entry.notBefore = time;
  }

  /** Its stream says it is finished or gone. */
  forget(uploadId: string): void {
    this.pending.delete(uploadId);
  }

  has(uploadId: string): boolean {
    return this.pending.has(uploadId);
  }

  get size(): number {
    return this.pending.size;
  }

  /** The oldest uploads due at `now`, skipping `busy` ones. */
  due(now: number, busy: ReadonlySet<string>, limit: number): PendingUpload[] {
    const found: PendingUpload[] = [];
    for (const entry of this.pending.values()) {
      if (found.length >= limit) break;
      if (entry.notBefore <= now && !busy.has(entry.uploadId)) found.push(entry);
    }
    return found;
  }

  /** The earliest time a not-busy upload becomes due (undefined when none waits). */
  nextDue(busy: ReadonlySet<string>): number | undefined {
    let next: number | undefined;
    for (const entry of this.pending.values())
      if (!busy.has(entry.uploadId) && (next === undefined || entry.notBefore < next)) next = entry.notBefore;
    return next;
  }

  /** Resume after this: every unfinished upload's UploadReceived comes after it. */
  checkpoint(): GlobalPosition {
    let oldest: GlobalPosition | undefined;
    for (const entry of this.pending.values())
      if (oldest === undefined || comparePositions(entry.resumeAfter, oldest) < 0) oldest = entry.resumeAfter;
    return oldest ?? this.lastSeen;
  }
}

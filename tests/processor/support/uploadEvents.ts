import type { GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';

export const at = (n: number): GlobalPosition => ({ commit: BigInt(n), prepare: BigInt(n) });

/**
 * Events of upload streams as the processor reads them, at positions start + 1, start + 2, … in the
 * order they are made; `restart` numbers them from `start` again.
 */
export function uploadEvents(start: number) {
  let seq = start;
  const event = (type: string, data: Record<string, unknown>): RecordedEvent => {
    seq += 1;
    return {
      id: `e${seq}`,
      type,
      data,
      metadata: {
        actor: 'system',
        requestId: null,
        correlationId: 'c',
        causationId: null,
        schemaVersion: 1,
        recordedAt: '',
      },
      streamName: `upload-${String(data.uploadId)}`,
      streamRevision: 0n,
      position: at(seq),
    };
  };
  const received = (uploadId: string, uploaderId = 1, sizeBytes = 1): RecordedEvent =>
    event('UploadReceived', {
      uploadId,
      blobKey: `uploads/${uploadId}`,
      filename: 'a.nii',
      sizeBytes,
      uploaderId,
    });
  const restart = (): void => {
    seq = start;
  };
  return { event, received, restart };
}

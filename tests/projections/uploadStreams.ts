import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { type GlobalPosition, comparePositions } from '#shared/eventStore/eventStore';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { type UploadCommand, decideUpload } from '#shared/domain/uploads/decide';
import {
  type UploadEvent,
  type UploadState,
  uploadDecider,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import { uploadsProjection } from '#services/projector/projections/uploadsProjection';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';
import { waitFor } from '#tests/support/waitFor';

export interface UploadStreams {
  /** The read models' pool (file_uploads). */
  readonly pool: () => pg.Pool;
  /** Decides the command on the upload's state so far and appends what it decided. */
  readonly decide: (uploadId: string, command: UploadCommand) => Promise<void>;
  /** An upload received (as the API records one), of a brain or of none. */
  readonly receive: (uploadId: string, brainId?: number | null) => Promise<void>;
  /** Waits (bounded) until what was appended is readable, then catches file_uploads up. */
  readonly catchUp: () => Promise<void>;
}

/**
 * Upload streams written through the real decider into a fresh database of the test run, and the
 * file uploads projection run over them: registers the file's beforeAll/afterAll.
 */
export function uploadStreams(databaseName: string): UploadStreams {
  const db = eventStoreDatabase(databaseName);
  let lastAppended: GlobalPosition | undefined;
  const states = new Map<string, UploadState>();

  const decide = async (uploadId: string, command: UploadCommand): Promise<void> => {
    const state = states.get(uploadId) ?? uploadDecider.initialState();
    const events: UploadEvent[] = decideUpload(command, state);
    states.set(uploadId, events.reduce(uploadDecider.evolve, state));
    ({ position: lastAppended } = await db.store.appendToStream(
      uploadStreamName(uploadId),
      events.map((e) => ({
        id: randomUUID(),
        type: e.type,
        data: e.data,
        metadata: { actor: '7', requestId: null, correlationId: 'c', causationId: null, schemaVersion: 1 },
      })),
    ));
  };

  return {
    pool: () => db.pool,
    decide,
    receive: (uploadId, brainId = null) =>
      decide(uploadId, {
        type: 'ReceiveUpload',
        data: {
          uploadId,
          name: brainId === null ? 'scan.nii.gz' : `scan-${brainId}.nii.gz`,
          filename: brainId === null ? 'scan.nii.gz' : `scan-${brainId}.nii.gz`,
          sizeBytes: 3 * 2 ** 20,
          sha256: 'cd'.repeat(32),
          mimeType: 'application/gzip',
          blobKey: `uploads/${uploadId}.nii.gz`,
          uploaderId: 7,
          associatedBrainId: brainId,
          receivedAt: '2026-01-01T00:00:00.000Z',
        },
      }),
    catchUp: async () => {
      const appended = lastAppended;
      if (appended)
        await waitFor('the appended events to become readable', () => db.store.headPosition(), {
          timeoutMs: 60_000,
          until: (head) => comparePositions(head, appended) >= 0,
        });
      await new ProjectionRunner({
        store: db.store,
        pool: db.pool,
        projections: [uploadsProjection],
      }).catchUp();
    },
  };
}

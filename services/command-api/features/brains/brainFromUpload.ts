import type { CommandContext } from '#shared/commandHandling/commandContext';
import { handleCommand, loadAggregate } from '#shared/commandHandling/handleCommand';
import { decideBrain } from '#shared/domain/brains/decide';
import {
  type BrainCreated,
  type BrainState,
  brainDecider,
  brainStreamName,
} from '#shared/domain/brains/events';
import type { Actor } from '#shared/domain/actor';
import { ConflictError } from '#shared/domain/domainErrors';
import { type AttachUploadToBrain, decideUpload } from '#shared/domain/uploads/decide';
import {
  type LiveUpload,
  type UploadState,
  isLiveUpload,
  uploadDecider,
  uploadStreamName,
} from '#shared/domain/uploads/events';
import type { BidsSidecar } from '#shared/domain/uploads/sidecar';
import { type GlobalPosition, UnitOfWorkConflictError } from '#shared/eventStore/eventStore';
import type { CommandDeps } from '#services/command-api/commandDeps';
import type { CreateBrainFor } from './brainCreation';
import { abandonedBrainOf, fenceBrain } from './abandonedBrain';

/** Runs of the unit of work lost to a concurrent transaction (UnitOfWorkConflictError) before 409. */
const MAX_RUNS = 4;

export interface BrainFromUpload {
  readonly created: BrainCreated;
  readonly upload: LiveUpload;
  readonly position: GlobalPosition | undefined;
}

/**
 * Creates a brain whose file is one of the caller's uploads (decisions.md "Resumable uploads").
 * Two writes: UploadAttachedToBrain on the upload's stream (optimistic concurrency against the
 * upload's state: of parallel creates naming one upload, one wins, the others find it taken: 400),
 * then BrainCreated on the new brain's stream. Where the store has a unit of work (PostgreSQL) both
 * commit together or not at all. The attach is the transaction's first write, so it takes the
 * upload stream's lock before the transaction has an id (the global order then cannot contradict
 * the stream's); the brain id is allocated before the transaction, so a losing create leaves a gap
 * in brain ids, nothing else. Without a unit of work (EventStoreDB) the attach commits first; a
 * create that fails after it fences the brain it named, so that the upload is free again
 * (abandonedBrain.ts), and a request that finds an upload attached to a brain still missing a
 * minute later fences it itself.
 */
export async function createBrainFromUpload(
  deps: CommandDeps,
  uploadId: string,
  sidecar: BidsSidecar | null,
  command: CreateBrainFor,
  actor: Actor,
  cmd: CommandContext,
  now: string,
): Promise<BrainFromUpload> {
  const uploadStream = uploadStreamName(uploadId);
  const { state } = await loadAggregate(deps.store, uploadStream, uploadDecider);
  const abandonedBrainId =
    isLiveUpload(state) && state.uploaderId === actor.userId
      ? await abandonedBrainOf(deps.store, state, cmd, now)
      : undefined;
  const attach = (brainId: number): AttachUploadToBrain => ({
    type: 'AttachUploadToBrain',
    data: { brainId, sidecar, actor, now, ...(abandonedBrainId === undefined ? {} : { abandonedBrainId }) },
  });
  // Refused uploads (unknown, another's, taken, failed) are 400 before an id is taken.
  decideUpload(attach(0), state);
  const brainId = await deps.ids.next('brain', cmd);
  const work = async (): Promise<BrainFromUpload> => {
    const attached = await handleCommand(
      deps.store,
      uploadStream,
      uploadDecider,
      (state: UploadState) => decideUpload(attach(brainId), state),
      cmd,
    );
    const created = await handleCommand(
      deps.store,
      brainStreamName(brainId),
      brainDecider,
      (brain: BrainState) => decideBrain(command(brainId, uploadId), brain),
      cmd,
      { newStream: true }, // the id was just allocated
    ).catch(async (error: unknown) => {
      // Without a unit of work the attach is committed: the brain it names is fenced, which frees
      // the upload for the next request (should this fail too, the next request after a minute).
      if (!deps.store.unitOfWork)
        await fenceBrain(deps.store, brainId, uploadId, cmd, now).catch(() => undefined);
      throw error;
    });
    return {
      created: created.events[0] as BrainCreated,
      upload: attached.state as LiveUpload,
      position: created.position,
    };
  };
  const unitOfWork = deps.store.unitOfWork;
  // Without one (EventStoreDB) the attach comes first, and a failed create frees the upload again
  // by fencing its brain (abandonedBrain.ts).
  if (!unitOfWork) return work();
  if (unitOfWork.isActive()) return work(); // joins the caller's (Idempotency-Key), which reruns it
  for (let run = 1; ; run++) {
    try {
      return await unitOfWork.run(work);
    } catch (error) {
      if (!(error instanceof UnitOfWorkConflictError)) throw error;
      if (run >= MAX_RUNS) throw new ConflictError('The request conflicted with concurrent ones; try again.');
    }
  }
}

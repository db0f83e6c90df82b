import type { EventStore } from '#shared/eventStore/eventStore';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import type { ActiveBrain } from '#shared/domain/brains/events';
import { isLiveUpload, uploadDecider, uploadStreamName } from '#shared/domain/uploads/events';
import { brainRowOfState, brainShapeB } from '#shared/views/brainViews';

/** Shape B of a brain as its stream now has it (PUT and PATCH answer this). */
export async function brainShapeBFromState(store: EventStore, brain: ActiveBrain, baseUrl: string) {
  const uploadId = brain.fileUploadIds[0];
  const upload = uploadId
    ? (await loadAggregate(store, uploadStreamName(uploadId), uploadDecider)).state
    : undefined;
  return brainShapeB(
    brainRowOfState(brain, upload && isLiveUpload(upload) ? upload.filename : null),
    baseUrl,
  );
}

import type { EventStore } from '#shared/eventStore/eventStore';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import type { ActiveBrain } from '#shared/domain/brains/events';
import { isLiveUpload, uploadDecider, uploadStreamName } from '#shared/domain/uploads/events';
import { brainShapeB } from '#shared/views/brainViews';

/** Shape B of a brain as its stream now has it (PUT and PATCH answer this). */
export async function brainShapeBFromState(store: EventStore, brain: ActiveBrain, baseUrl: string) {
  const uploadId = brain.fileUploadIds[0];
  const upload = uploadId
    ? (await loadAggregate(store, uploadStreamName(uploadId), uploadDecider)).state
    : undefined;
  return brainShapeB(
    {
      id: brain.brainId,
      readable_id: brain.readableId,
      uuid: brain.uuid,
      name: brain.name,
      date_uploaded: brain.createdAt,
      website: brain.website,
      verified: brain.verified,
      category_id: brain.categoryId,
      uploader_id: brain.uploaderId,
      atlas_id: brain.atlasId,
      is_reference: brain.isReference,
      extra_link: brain.extraLink,
      file_name: upload && isLiveUpload(upload) ? upload.filename : null,
    },
    baseUrl,
  );
}

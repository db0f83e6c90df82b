/**
 * A file upload by replay: its stream (404 unless the caller uploaded it or is staff: uploads are
 * private), and the detail route's answer as of a point, from the upload's stream with its
 * uploader's and its brain's, each read once up to the point.
 */
import type { EventStore, ReadStreamOptions, RecordedEvent } from '#shared/eventStore/eventStore';
import { formatPosition } from '#shared/eventStore/eventStore';
import type { Reply } from '#shared/http/routeSpec';
import type { Principal } from '#shared/auth/principal';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { NotFoundError } from '#shared/errors/httpErrors';
import { canonicalUuid } from '#shared/http/ids';
import { publicDownloadUrl } from '#shared/http/download/publicDownloadUrl';
import { uploadStreamName } from '#shared/domain/uploads/events';
import { userStreamName } from '#shared/domain/accounts/events';
import { brainStreamName } from '#shared/domain/brains/events';
import { fileUploadDownloadUrl, fileUploadJson } from '#shared/views/fileUploadViews';
import { type AsOf, AS_OF_POSITION_HEADER, readUpTo } from '#shared/audit/asOf';
import { mergeByPosition } from '#shared/audit/replay/timeline';
import { emptyWorld, evolveWorld } from '#shared/audit/replay/catalogueWorld';
import { uploadReceivedIn, uploadRowAt } from '#shared/audit/replay/uploadReplay';

export interface UploadStreams {
  readonly uploadId: string;
  /** The upload's, its uploader's first (UserRegistered: username and email) and its brain's. */
  readonly streams: RecordedEvent[][];
}

/**
 * The streams an upload's representation is made of, read with these options; undefined (404) when
 * the id names no upload received by then, or one the caller may not see.
 */
export async function readUploadStreams(
  store: EventStore,
  id: string,
  principal: Principal,
  options: ReadStreamOptions = {},
): Promise<UploadStreams | undefined> {
  const uploadId = canonicalUuid(id);
  if (uploadId === undefined) return undefined;
  const upload = await store.readStream(uploadStreamName(uploadId), options);
  const received = uploadReceivedIn(upload);
  if (!received || (received.uploaderId !== principal.userId && !principal.isStaff)) return undefined;
  const [uploader, brain] = await Promise.all([
    store.readStream(userStreamName(received.uploaderId), { ...options, maxCount: 1 }),
    received.associatedBrainId === null
      ? Promise.resolve([])
      : store.readStream(brainStreamName(received.associatedBrainId), options),
  ]);
  return { uploadId, streams: [upload, uploader, brain] };
}

/** GET /api/file-uploads/{id}/?as_of=…: the upload right after the last event at or before the point. */
export async function fileUploadAsOfReply(
  store: EventStore,
  blobs: BlobStore,
  id: string,
  principal: Principal,
  asOf: AsOf,
  baseUrl: string,
): Promise<Reply> {
  const found = await readUploadStreams(store, id, principal, readUpTo(asOf));
  if (!found) throw new NotFoundError();
  const events = mergeByPosition(found.streams);
  const row = uploadRowAt(events.reduce(evolveWorld, emptyWorld()), found.uploadId);
  const newest = events.at(-1);
  if (!row || !newest) throw new NotFoundError();
  const s3Url = await publicDownloadUrl(blobs, fileUploadDownloadUrl(baseUrl, row.id), {
    key: row.blob_key,
    filename: row.filename,
  });
  return {
    status: 200,
    body: fileUploadJson(row, baseUrl, s3Url),
    headers: {
      [AS_OF_POSITION_HEADER]: formatPosition(newest.position),
      'Cache-Control': 'private, no-cache',
    },
  };
}

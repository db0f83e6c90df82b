/**
 * A file upload by replay: its stream (404 unless the caller uploaded it, is staff, or is a
 * collaborator of its brain now: uploads are private), and the detail route's answer as of a point, from the upload's stream with its
 * uploader's and its brain's, each read once up to the point.
 */
import type { Pool } from 'pg';
import type { ReadStreamOptions, RecordedEvent } from '#shared/eventStore/eventStore';
import { formatPosition } from '#shared/eventStore/eventStore';
import type { Reply } from '#shared/http/routeSpec';
import type { Principal } from '#shared/auth/principal';
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
import { associatedBrainIn, uploadReceivedIn, uploadRowAt } from '#shared/audit/replay/uploadReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { asSeenBy } from '#shared/query/uploadVisibility';

export interface UploadStreams {
  readonly uploadId: string;
  /** The upload's, its uploader's first (UserRegistered: username and email) and its brain's. */
  readonly streams: RecordedEvent[][];
}

/**
 * Whether the user is now a collaborator of the brain the upload belongs to (attached to it, or its
 * file), as the read models have it: collaborators read a brain's uploads (decisions.md).
 */
async function sharedWith(
  pool: Pool,
  uploadId: string,
  associatedBrainId: number | null,
  userId: number,
): Promise<boolean> {
  const { rows } = await pool.query(
    `SELECT 1 FROM brain_collaborators bc JOIN brains xb ON xb.id = bc.brain_id
      WHERE bc.user_id = $1 AND (xb.id = $2 OR xb.file_upload_id::uuid = $3::uuid) LIMIT 1`,
    [userId, associatedBrainId, uploadId],
  );
  return rows.length > 0;
}

/**
 * The streams an upload's representation is made of, read with these options; undefined (404) when
 * the id names no upload received by then, or one the caller may not see (neither theirs nor of a
 * brain shared with them now).
 */
export async function readUploadStreams(
  { store, readModels }: Pick<QueryDeps, 'store' | 'readModels'>,
  id: string,
  principal: Principal,
  options: ReadStreamOptions = {},
): Promise<UploadStreams | undefined> {
  const uploadId = canonicalUuid(id);
  if (uploadId === undefined) return undefined;
  const upload = await store.readStream(uploadStreamName(uploadId), options);
  const received = uploadReceivedIn(upload);
  if (!received) return undefined;
  // Received for a brain, or attached to one later (POST /api/brains/ with `upload`).
  const brainId = associatedBrainIn(upload);
  const mayRead =
    received.uploaderId === principal.userId ||
    principal.isStaff ||
    (await sharedWith(readModels, uploadId, brainId, principal.userId));
  if (!mayRead) return undefined;
  const [uploader, brain] = await Promise.all([
    store.readStream(userStreamName(received.uploaderId), { ...options, maxCount: 1 }),
    brainId === null ? Promise.resolve([]) : store.readStream(brainStreamName(brainId), options),
  ]);
  return { uploadId, streams: [upload, uploader, brain] };
}

/** GET /api/file-uploads/{id}/?as_of=…: the upload right after the last event at or before the point. */
export async function fileUploadAsOfReply(
  deps: Pick<QueryDeps, 'store' | 'readModels' | 'blobs' | 'uploaderEmails'>,
  id: string,
  principal: Principal,
  asOf: AsOf,
  baseUrl: string,
): Promise<Reply> {
  const { blobs } = deps;
  const found = await readUploadStreams(deps, id, principal, readUpTo(asOf));
  if (!found) throw new NotFoundError();
  const events = mergeByPosition(found.streams);
  const replayed = uploadRowAt(events.reduce(evolveWorld, emptyWorld()), found.uploadId);
  const newest = events.at(-1);
  if (!replayed || !newest) throw new NotFoundError();
  const row = asSeenBy(replayed, principal, deps.uploaderEmails);
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

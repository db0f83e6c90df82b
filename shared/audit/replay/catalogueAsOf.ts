/**
 * `as_of` on the catalogue's detail routes (decisions.md "Audit"): the representation right after
 * the last event at or before the point, by replay; 404 when the resource did not exist then.
 */
import type { Pool } from 'pg';
import { NotFoundError } from '#shared/errors/httpErrors';
import { type EventStore, formatPosition } from '#shared/eventStore/eventStore';
import { AS_OF_POSITION_HEADER, type AsOf } from '#shared/audit/asOf';
import {
  type CatalogueReplaySource,
  type ReplayPoint,
  catalogueReplaySource,
  replayPointOf,
} from './catalogueReplaySource';
import type { Replayed } from './catalogueReplay';

/** The 200 answer of a detail route as of a point: the body and its X-As-Of-Position. */
export async function catalogueAsOfReply<Json>(
  readModels: Pool,
  store: EventStore,
  asOf: AsOf,
  replay: (source: CatalogueReplaySource, point: ReplayPoint) => Promise<Replayed<Json> | undefined>,
): Promise<{ readonly status: 200; readonly body: Json; readonly headers: Record<string, string> }> {
  const point = await replayPointOf(readModels, asOf);
  const replayed = await replay(catalogueReplaySource(readModels, store), point);
  if (!replayed) throw new NotFoundError();
  return {
    status: 200,
    body: replayed.json,
    headers: { [AS_OF_POSITION_HEADER]: formatPosition(replayed.position) },
  };
}

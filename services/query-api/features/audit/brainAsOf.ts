/**
 * A brain by replay: its stream found by key (an id, or a readable_id, which ends in the id), and
 * the detail route's answer as of a point (decisions.md "Audit", As of), from the brain's stream
 * and the streams its representation shows, each read once up to the point.
 */
import type { EventStore, ReadStreamOptions, RecordedEvent } from '#shared/eventStore/eventStore';
import { formatPosition } from '#shared/eventStore/eventStore';
import type { Reply } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { databaseIdOf } from '#shared/http/ids';
import { isNumericKey } from '#shared/domain/naming/naming';
import { brainStreamName } from '#shared/domain/brains/events';
import type { Viewer } from '#shared/domain/brains/visibility';
import { mayNowSee } from '#shared/query/brainVisibility';
import { type AsOf, AS_OF_POSITION_HEADER, isAtOrBefore, readUpTo } from '#shared/audit/asOf';
import { mergeByPosition } from '#shared/audit/replay/timeline';
import { evolveWorld, worldOfStream } from '#shared/audit/replay/catalogueWorld';
import {
  activeBrain,
  brainIdOfReadableId,
  brainJsonAt,
  hasReadableId,
  streamsShownBy,
} from '#shared/audit/replay/brainReplay';
import type { BrainShape, BrainView } from '#shared/views/brainViews';

export interface BrainStream {
  readonly brainId: number;
  readonly events: RecordedEvent[];
}

/**
 * The stream of the brain a key names, read with these options; undefined when the key names no
 * brain that had been created by then (a readable_id must be the one its BrainCreated gave it).
 */
export async function readBrainStream(
  store: EventStore,
  key: string,
  options: ReadStreamOptions = {},
): Promise<BrainStream | undefined> {
  const numeric = isNumericKey(key);
  const brainId = numeric ? databaseIdOf(key) : brainIdOfReadableId(key);
  if (brainId === undefined) return undefined;
  const events = await store.readStream(brainStreamName(brainId), options);
  if (events.length === 0 || (!numeric && !hasReadableId(events, key))) return undefined;
  return { brainId, events };
}

/**
 * The brain's events at or before the point, as readBrainStream would read them up to it: taken
 * from the whole stream, already read to judge who may see the brain now (one read, not two).
 */
function upToPoint(whole: BrainStream, key: string, asOf: AsOf): BrainStream | undefined {
  const events = whole.events.filter((event) => isAtOrBefore(event, asOf));
  if (events.length === 0 || (!isNumericKey(key) && !hasReadableId(events, key))) return undefined;
  return { brainId: whole.brainId, events };
}

/**
 * GET /api/brains/{key}/?as_of=…: the brain right after the last event at or before the point;
 * 404 for a brain the viewer may not see now.
 */
export async function brainAsOfReply(
  store: EventStore,
  key: string,
  asOf: AsOf,
  shape: BrainShape,
  view: BrainView,
  viewer: Viewer,
): Promise<Reply> {
  const whole = await readBrainStream(store, key);
  if (!whole || !mayNowSee(whole.events, viewer)) throw new NotFoundError();
  const found = upToPoint(whole, key, asOf);
  const world = found && worldOfStream(found.events);
  const brain = found && world && activeBrain(world, found.brainId);
  if (!found || !world || !brain) throw new NotFoundError();
  const upTo = readUpTo(asOf);
  const shown = await Promise.all(
    streamsShownBy(brain, shape).map(({ name, firstOnly }) =>
      store.readStream(name, firstOnly ? { ...upTo, maxCount: 1 } : upTo),
    ),
  );
  // Each stream's state depends on its own events only: the others fold on top of the brain's.
  const others = mergeByPosition(shown);
  const newest = mergeByPosition([found.events.slice(-1), others.slice(-1)]).at(-1);
  if (!newest) throw new NotFoundError();
  // An embargo is judged at the asked time (a position: the newest event shown), not now.
  const atMs = asOf.kind === 'time' ? asOf.time.getTime() : Date.parse(newest.metadata.recordedAt);
  const body = brainJsonAt(others.reduce(evolveWorld, world), found.brainId, shape, view, atMs);
  if (!body) throw new NotFoundError();
  return { status: 200, body, headers: { [AS_OF_POSITION_HEADER]: formatPosition(newest.position) } };
}

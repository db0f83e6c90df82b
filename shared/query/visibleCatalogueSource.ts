/**
 * The catalogue replays (a species, an atlas, a category as of a point) as a viewer sees them: a
 * brain they may not see now reads as a stream without events, so no replay lists or counts it
 * (decisions.md "Visibility and collaborators": absent from every species summary, its past
 * included). The rule is the current one: by the read model for a brain that exists, by the
 * state it was deleted in (its stream) for one that no longer does.
 */
import type { Pool } from 'pg';
import type { EventStore, RecordedEvent } from '#shared/eventStore/eventStore';
import type { CatalogueReplaySource } from '#shared/audit/replay/catalogueReplaySource';
import type { Viewer } from '#shared/domain/brains/visibility';
import { brainStreamName } from '#shared/domain/brains/events';
import { mayNowSee, visibleBrainSql } from './brainVisibility';
import { SqlConditions } from './sqlConditions';

/** Where the rule is read: the read models, and the event store for brains no longer in them. */
export interface VisibilitySources {
  readonly readModels: Pool;
  readonly store: EventStore;
}

const BRAIN_STREAM = /^brain-(\d+)$/;
const STREAM_READS_AT_ONCE = 8;

/** The ids of these brains the viewer may see now. */
async function visibleNow(
  deps: VisibilitySources,
  viewer: Viewer,
  ids: readonly number[],
): Promise<Set<number>> {
  const conditions = new SqlConditions();
  const rule = visibleBrainSql(conditions, viewer, 'b') ?? 'true';
  const { rows } = await deps.readModels.query<{ id: number; visible: boolean }>(
    `SELECT b.id, coalesce((${rule}), false) AS visible FROM brains b
      WHERE b.id = ANY(${conditions.param(ids)}::integer[])`,
    conditions.params(),
  );
  const visible = new Set(rows.filter((row) => row.visible).map((row) => row.id));
  const known = new Set(rows.map((row) => row.id));
  // Deleted (or not in the read model yet): the stream says what the brain was last. A few at once.
  const unknown = ids.filter((id) => !known.has(id));
  for (let start = 0; start < unknown.length; start += STREAM_READS_AT_ONCE) {
    const batch = unknown.slice(start, start + STREAM_READS_AT_ONCE);
    const streams = await Promise.all(batch.map((id) => deps.store.readStream(brainStreamName(id))));
    batch.forEach((id, i) => {
      if (mayNowSee(streams[i] ?? [], viewer)) visible.add(id);
    });
  }
  return visible;
}

export function visibleCatalogueSource(
  source: CatalogueReplaySource,
  deps: VisibilitySources,
  viewer: Viewer,
): CatalogueReplaySource {
  if (viewer.isStaff) return source;
  return {
    resourcesNaming: (refs, type, seq) => source.resourcesNaming(refs, type, seq),
    orderByName: (items) => source.orderByName(items),
    async readStreams(names, upTo): Promise<RecordedEvent[][]> {
      const brainIds = names.map((name) => {
        const match = BRAIN_STREAM.exec(name);
        return match ? Number(match[1]) : undefined;
      });
      const wanted = brainIds.filter((id): id is number => id !== undefined);
      const [streams, visible] = await Promise.all([
        source.readStreams(names, upTo),
        wanted.length === 0 ? Promise.resolve(new Set<number>()) : visibleNow(deps, viewer, wanted),
      ]);
      return streams.map((events, i) => {
        const id = brainIds[i];
        return id === undefined || visible.has(id) ? events : [];
      });
    },
  };
}

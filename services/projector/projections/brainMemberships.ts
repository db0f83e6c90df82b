import type { BrainCreated, BrainEvent } from '#shared/domain/brains/events';
import type { ProjectionContext } from '#shared/projections/projection';
import { type CounterSpec, countMemberFor, countNewMembersFor } from '#shared/projections/memberCounts';

type Placement = 'atlasId' | 'speciesId' | 'categoryId';

/**
 * The events that place a brain in the catalogue: the taxonomy it is placed under (categories,
 * species, atlases) and the brain's own creation, move and deletion.
 */
export const PLACEMENT_EVENT_TYPES: ReadonlySet<string> = new Set([
  'CategoryCreated',
  'SpeciesCreated',
  'AtlasCreated',
  'BrainCreated',
  'BrainUpdated',
  'BrainDeleted',
]);

/**
 * Keeps a brain counted for the owner its events name in `field` (its atlas, species or category):
 * created, moved by an update, or gone. Returns the changed keys under `keyPrefix`.
 */
export async function countBrainFor(
  ctx: ProjectionContext,
  spec: CounterSpec,
  event: BrainEvent,
  field: Placement,
  keyPrefix: string,
): Promise<string[]> {
  switch (event.type) {
    case 'BrainCreated': {
      const owner = event.data[field];
      await countMemberFor(ctx, spec, 'brain', event.data.brainId, owner);
      return owner === null ? [] : [`${keyPrefix}:${owner}`];
    }
    case 'BrainUpdated': {
      const owner = event.data.changes[field];
      if (owner === undefined) return [];
      await countMemberFor(ctx, spec, 'brain', event.data.brainId, owner);
      return [`${keyPrefix}:*`];
    }
    case 'BrainDeleted':
      await countMemberFor(ctx, spec, 'brain', event.data.brainId, null);
      return [`${keyPrefix}:*`];
    // Who may see a brain does not move it: the query side leaves out what a viewer may not see.
    case 'BrainCollaboratorAdded':
    case 'BrainCollaboratorRoleChanged':
    case 'BrainCollaboratorRemoved':
    case 'EmbargoLifted':
      return [];
  }
}

export const isBrainCreated = (event: { readonly type: string }): event is BrainCreated =>
  event.type === 'BrainCreated';

/** countBrainFor for a run of created brains, in one statement; the changed keys of their owners. */
export async function countCreatedBrainsFor(
  ctx: ProjectionContext,
  spec: CounterSpec,
  created: readonly BrainCreated[],
  field: Placement,
  keyPrefix: string,
): Promise<string[]> {
  const members = created.map((e) => ({ memberId: e.data.brainId, ownerId: e.data[field] }));
  await countNewMembersFor(ctx, spec, 'brain', members);
  const owners = new Set(members.flatMap((m) => (m.ownerId === null ? [] : [m.ownerId])));
  return [...owners].map((owner) => `${keyPrefix}:${owner}`);
}

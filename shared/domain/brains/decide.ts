import { ConflictError, NotFoundError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import type { Actor } from '#shared/domain/actor';
import type { ActiveBrain, BrainEvent, BrainFields, BrainState } from './events';

/** An atlas the caller named, as read from its stream: where it places a brain. */
export interface AtlasPlacement {
  readonly atlasId: number;
  readonly speciesId: number;
  readonly categoryId: number;
}

/** A reference the caller sent: found, or named but missing (a 400 on that field). */
export type Resolved<T> = { readonly found: T } | { readonly missing: string } | undefined;

export type CreateBrain = {
  readonly type: 'CreateBrain';
  readonly data: {
    readonly brainId: number;
    readonly readableId: string;
    readonly uuid: string;
    readonly name: string;
    readonly description: string;
    readonly atlas: Resolved<AtlasPlacement>;
    readonly category: Resolved<number>;
    readonly isReference: boolean;
    readonly extraLink: string;
    readonly website: string;
    readonly color: string;
    readonly verified: boolean;
    readonly fileUploadId: string | null;
    readonly actor: Actor;
    readonly now: string;
  };
};

/** PUT sends every field (missing ones keep their defaults), PATCH only those that change. */
export type UpdateBrain = {
  readonly type: 'UpdateBrain';
  readonly data: {
    readonly name?: string;
    readonly description?: string;
    readonly atlas?: Resolved<AtlasPlacement> | null;
    readonly category?: Resolved<number>;
    readonly isReference?: boolean;
    readonly extraLink?: string;
    readonly website?: string;
    readonly color?: string;
    readonly verified?: boolean;
    readonly actor: Actor;
    readonly now: string;
  };
};

export type DeleteBrain = {
  readonly type: 'DeleteBrain';
  readonly data: { readonly actor: Actor; readonly now: string };
};

export type BrainCommand = CreateBrain | UpdateBrain | DeleteBrain;

export const ATLAS_OR_CATEGORY = 'Provide an atlas or a category.';
export const CATEGORY_CONTRADICTS_ATLAS = "The category does not match the category of the atlas's species.";

const missing = (reference: string): string => `Invalid pk "${reference}" - object does not exist.`;

/** Where atlas and category place a brain; errors are collected per field. */
function placement(
  atlas: Resolved<AtlasPlacement> | null,
  category: Resolved<number>,
  errors: Record<string, string[]>,
): Pick<BrainFields, 'atlasId' | 'speciesId' | 'categoryId'> | undefined {
  if (atlas && 'missing' in atlas) errors.atlas = [missing(atlas.missing)];
  if (category && 'missing' in category) errors.category = [missing(category.missing)];
  const foundAtlas = atlas && 'found' in atlas ? atlas.found : undefined;
  const foundCategory = category && 'found' in category ? category.found : undefined;
  if (foundAtlas && foundCategory !== undefined && foundCategory !== foundAtlas.categoryId)
    errors.category = [CATEGORY_CONTRADICTS_ATLAS];
  if (Object.keys(errors).length > 0) return undefined;
  if (foundAtlas)
    return {
      atlasId: foundAtlas.atlasId,
      speciesId: foundAtlas.speciesId,
      categoryId: foundAtlas.categoryId,
    };
  if (foundCategory !== undefined) return { atlasId: null, speciesId: null, categoryId: foundCategory };
  errors.non_field_errors = [ATLAS_OR_CATEGORY];
  return undefined;
}

function createBrain({ data }: CreateBrain, state: BrainState): BrainEvent[] {
  if (data.verified && !data.actor.isStaff) throw new ForbiddenError('Only staff may verify brains.');
  if (state.status !== 'none') throw new ConflictError(`Brain ${data.brainId} already exists.`);
  const errors: Record<string, string[]> = {};
  if (data.name.trim() === '') errors.name = ['This field may not be blank.'];
  const placed = placement(data.atlas, data.category, errors);
  if (!placed) throw new InvalidFieldError(errors);
  if (Object.keys(errors).length > 0) throw new InvalidFieldError(errors);
  return [
    {
      type: 'BrainCreated',
      data: {
        brainId: data.brainId,
        readableId: data.readableId,
        uuid: data.uuid,
        name: data.name.trim(),
        description: data.description,
        ...placed,
        isReference: data.isReference,
        extraLink: data.extraLink,
        website: data.website,
        color: data.color,
        verified: data.verified,
        uploaderId: data.actor.userId,
        fileUploadId: data.fileUploadId,
        createdAt: data.now,
      },
    },
  ];
}

function activeFor(state: BrainState, actor: Actor): ActiveBrain {
  if (state.status !== 'active') throw new NotFoundError();
  if (state.uploaderId !== actor.userId && !actor.isStaff)
    throw new ForbiddenError('Only the uploader or staff may change this brain.');
  return state;
}

function changedFields(brain: ActiveBrain, wanted: Partial<BrainFields>): Partial<BrainFields> {
  const changes: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(wanted) as [keyof BrainFields, unknown][])
    if (value !== undefined && brain[field] !== value) changes[field] = value;
  return changes;
}

function updateBrain({ data }: UpdateBrain, state: BrainState): BrainEvent[] {
  const brain = activeFor(state, data.actor);
  if (data.verified !== undefined && data.verified !== brain.verified && !data.actor.isStaff)
    throw new ForbiddenError('Only staff may verify brains.');
  const errors: Record<string, string[]> = {};
  if (data.name !== undefined && data.name.trim() === '') errors.name = ['This field may not be blank.'];
  let placed: Partial<BrainFields> = {};
  if (data.atlas !== undefined || data.category !== undefined) {
    // An unchanged atlas still constrains a new category; atlas null files it under the category alone.
    const atlas =
      data.atlas !== undefined
        ? data.atlas
        : brain.atlasId !== null && brain.speciesId !== null
          ? { found: { atlasId: brain.atlasId, speciesId: brain.speciesId, categoryId: brain.categoryId } }
          : undefined;
    const category = data.category ?? (atlas ? undefined : { found: brain.categoryId });
    placed = placement(atlas, category, errors) ?? {};
  }
  if (Object.keys(errors).length > 0) throw new InvalidFieldError(errors);
  const changes = changedFields(brain, {
    name: data.name?.trim(),
    description: data.description,
    ...placed,
    isReference: data.isReference,
    extraLink: data.extraLink,
    website: data.website,
    color: data.color,
    verified: data.verified,
  });
  if (Object.keys(changes).length === 0) return [];
  return [
    {
      type: 'BrainUpdated',
      data: { brainId: brain.brainId, changes, updatedBy: data.actor.userId, updatedAt: data.now },
    },
  ];
}

function deleteBrain({ data }: DeleteBrain, state: BrainState): BrainEvent[] {
  const brain = activeFor(state, data.actor);
  return [
    {
      type: 'BrainDeleted',
      data: {
        brainId: brain.brainId,
        fileUploadIds: brain.fileUploadIds,
        deletedBy: data.actor.userId,
        deletedAt: data.now,
      },
    },
  ];
}

export function decideBrain(command: BrainCommand, state: BrainState): BrainEvent[] {
  switch (command.type) {
    case 'CreateBrain':
      return createBrain(command, state);
    case 'UpdateBrain':
      return updateBrain(command, state);
    case 'DeleteBrain':
      return deleteBrain(command, state);
    default: {
      const unknown: never = command;
      throw new Error(`unknown brain command ${JSON.stringify(unknown)}`);
    }
  }
}

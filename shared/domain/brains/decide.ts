import { ConflictError, NotFoundError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import type { Actor } from '#shared/domain/actor';
import {
  type ActiveBrain,
  type BrainEvent,
  type BrainFields,
  type BrainState,
  collaboratorIdsOf,
} from './events';
import { type CollaboratorRole, type Visibility, brainAccess, effectiveVisibility } from './visibility';

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
    /** Absent: public. */
    readonly visibility?: Visibility;
    /** ISO time; required with (and only read with) `embargoed`. */
    readonly embargoUntil?: string | null;
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
    readonly visibility?: Visibility;
    readonly embargoUntil?: string | null;
    readonly actor: Actor;
    readonly now: string;
  };
};

export type DeleteBrain = {
  readonly type: 'DeleteBrain';
  readonly data: { readonly actor: Actor; readonly now: string };
};

/** Adds a collaborator, or changes the role of one already there (the uploader or staff). */
export type ShareBrain = {
  readonly type: 'ShareBrain';
  readonly data: {
    readonly userId: number;
    readonly role: CollaboratorRole;
    readonly actor: Actor;
    readonly now: string;
  };
};

export type UnshareBrain = {
  readonly type: 'UnshareBrain';
  readonly data: { readonly userId: number; readonly actor: Actor; readonly now: string };
};

/** Records that an embargo has ended (the processor's timer): nothing unless it has. */
export type LiftEmbargo = {
  readonly type: 'LiftEmbargo';
  readonly data: { readonly now: string };
};

export type BrainCommand = CreateBrain | UpdateBrain | DeleteBrain | ShareBrain | UnshareBrain | LiftEmbargo;

export const ATLAS_OR_CATEGORY = 'Provide an atlas or a category.';
export const CATEGORY_CONTRADICTS_ATLAS = "The category does not match the category of the atlas's species.";

const missing = (reference: string): string => `Invalid pk "${reference}" - object does not exist.`;

export const EMBARGO_UNTIL_REQUIRED = 'An embargoed brain needs embargo_until.';
export const EMBARGO_UNTIL_PAST = 'embargo_until must be in the future.';
export const EMBARGO_UNTIL_INVALID = 'Enter a valid date/time (ISO 8601).';

/**
 * The visibility and embargo_until a write leaves: embargo_until is read only with `embargoed`
 * (a round-tripped answer's kept embargo_until is not an error) and must then be a future time.
 */
function visibilityFields(
  visibility: Visibility,
  embargoUntil: string | null | undefined,
  now: string,
  errors: Record<string, string[]>,
): Pick<BrainFields, 'visibility' | 'embargoUntil'> {
  if (visibility !== 'embargoed') return { visibility, embargoUntil: null };
  if (embargoUntil === undefined || embargoUntil === null) {
    errors.embargo_until = [EMBARGO_UNTIL_REQUIRED];
    return { visibility, embargoUntil: null };
  }
  const at = Date.parse(embargoUntil);
  if (Number.isNaN(at)) errors.embargo_until = [EMBARGO_UNTIL_INVALID];
  else if (at <= Date.parse(now)) errors.embargo_until = [EMBARGO_UNTIL_PAST];
  return { visibility, embargoUntil: Number.isNaN(at) ? null : new Date(at).toISOString() };
}

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
  const visible = visibilityFields(data.visibility ?? 'public', data.embargoUntil, data.now, errors);
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
        ...visible,
        uploaderId: data.actor.userId,
        fileUploadId: data.fileUploadId,
        createdAt: data.now,
      },
    },
  ];
}

/**
 * The brain, if the actor may do what `needs` says: a brain they may not see is not found (404),
 * one they see but may not change is forbidden (403). Editors may change descriptive fields.
 */
function activeFor(state: BrainState, actor: Actor, now: string, needs: 'edit' | 'own'): ActiveBrain {
  if (state.status !== 'active') throw new NotFoundError();
  const access = brainAccess({ ...state, collaboratorIds: collaboratorIdsOf(state) }, actor, Date.parse(now));
  if (access === 'none') throw new NotFoundError();
  if (access === 'own' || (access === 'edit' && needs === 'edit')) return state;
  throw new ForbiddenError(
    access === 'edit'
      ? 'Editors may change the descriptive fields only; the uploader or staff may do this.'
      : 'Only the uploader or staff may change this brain.',
  );
}

function changedFields(brain: ActiveBrain, wanted: Partial<BrainFields>): Partial<BrainFields> {
  const changes: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(wanted) as [keyof BrainFields, unknown][])
    if (value !== undefined && brain[field] !== value) changes[field] = value;
  return changes;
}

function updateBrain({ data }: UpdateBrain, state: BrainState): BrainEvent[] {
  const brain = activeFor(state, data.actor, data.now, 'edit');
  if (data.verified !== undefined && data.verified !== brain.verified && !data.actor.isStaff)
    throw new ForbiddenError('Only staff may verify brains.');
  const errors: Record<string, string[]> = {};
  let visible: Partial<BrainFields> = {};
  if (data.visibility !== undefined || data.embargoUntil !== undefined) {
    const visibility = data.visibility ?? brain.visibility;
    // embargo_until alone moves the embargo's end; a visibility that stays keeps its kept value.
    const embargoUntil =
      data.embargoUntil !== undefined
        ? data.embargoUntil
        : visibility === brain.visibility
          ? brain.embargoUntil
          : undefined;
    // Compared with what the brain reads as: an ended embargo round-tripped as public is no change.
    const current = effectiveVisibility(brain, Date.parse(data.now));
    const unchanged =
      visibility === current && (visibility !== 'embargoed' || embargoUntil === brain.embargoUntil);
    if (!unchanged) {
      visible = visibilityFields(visibility, embargoUntil, data.now, errors);
      activeFor(state, data.actor, data.now, 'own');
    }
  }
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
    ...visible,
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
  const brain = activeFor(state, data.actor, data.now, 'own');
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

export const COLLABORATOR_IS_UPLOADER = 'The uploader already has every right on this brain.';

function shareBrain({ data }: ShareBrain, state: BrainState): BrainEvent[] {
  const brain = activeFor(state, data.actor, data.now, 'own');
  if (data.userId === brain.uploaderId) throw InvalidFieldError.field('user', COLLABORATOR_IS_UPLOADER);
  const current = brain.collaborators[String(data.userId)];
  if (current?.role === data.role) return [];
  const { brainId } = brain;
  return [
    current
      ? {
          type: 'BrainCollaboratorRoleChanged',
          data: {
            brainId,
            userId: data.userId,
            role: data.role,
            previousRole: current.role,
            changedBy: data.actor.userId,
            changedAt: data.now,
          },
        }
      : {
          type: 'BrainCollaboratorAdded',
          data: {
            brainId,
            userId: data.userId,
            role: data.role,
            addedBy: data.actor.userId,
            addedAt: data.now,
          },
        },
  ];
}

function unshareBrain({ data }: UnshareBrain, state: BrainState): BrainEvent[] {
  const brain = activeFor(state, data.actor, data.now, 'own');
  if (!brain.collaborators[String(data.userId)]) throw new NotFoundError();
  return [
    {
      type: 'BrainCollaboratorRemoved',
      data: {
        brainId: brain.brainId,
        userId: data.userId,
        removedBy: data.actor.userId,
        removedAt: data.now,
      },
    },
  ];
}

function liftEmbargo({ data }: LiftEmbargo, state: BrainState): BrainEvent[] {
  if (state.status !== 'active' || state.visibility !== 'embargoed' || state.embargoUntil === null) return [];
  if (Date.parse(state.embargoUntil) > Date.parse(data.now)) return [];
  return [
    {
      type: 'EmbargoLifted',
      data: { brainId: state.brainId, embargoUntil: state.embargoUntil, liftedAt: data.now },
    },
  ];
}

export function decideBrain(command: BrainCommand, state: BrainState): BrainEvent[] {
  switch (command.type) {
    case 'ShareBrain':
      return shareBrain(command, state);
    case 'UnshareBrain':
      return unshareBrain(command, state);
    case 'LiftEmbargo':
      return liftEmbargo(command, state);
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

import type { CollaboratorRole, Visibility } from './visibility';

/** Events of the `brain-<id>` stream. */
export interface BrainFields {
  readonly name: string;
  readonly description: string;
  /** null for a brain filed under a category without an atlas. */
  readonly atlasId: number | null;
  /** Derived from the atlas (interface-spec 2.7 rule 1); null without an atlas. */
  readonly speciesId: number | null;
  /** Derived from the atlas's species when there is an atlas (rule 2), else as given. */
  readonly categoryId: number;
  readonly isReference: boolean;
  /** "" when absent (decisions.md). */
  readonly extraLink: string;
  readonly website: string;
  /** `#rrggbb`, or "". */
  readonly color: string;
  readonly verified: boolean;
  /** decisions.md "Visibility and collaborators"; changed only by the uploader or staff. */
  readonly visibility: Visibility;
  /** ISO time; set with `embargoed`, kept when the embargo is lifted, else null. */
  readonly embargoUntil: string | null;
}

/** The fields a BrainCreated carries: events written before visibility existed have neither (public). */
export type CreatedBrainFields = Omit<BrainFields, 'visibility' | 'embargoUntil'> &
  Partial<Pick<BrainFields, 'visibility' | 'embargoUntil'>>;

/** A created brain's visibility, with the default of the events written before it existed. */
export const createdVisibility = (
  data: CreatedBrainFields,
): Pick<BrainFields, 'visibility' | 'embargoUntil'> => ({
  visibility: data.visibility ?? 'public',
  embargoUntil: data.embargoUntil ?? null,
});

export type BrainCreated = {
  readonly type: 'BrainCreated';
  readonly data: CreatedBrainFields & {
    readonly brainId: number;
    readonly readableId: string;
    readonly uuid: string;
    readonly uploaderId: number;
    /** The file upload created with the brain (its file). */
    readonly fileUploadId: string | null;
    readonly createdAt: string;
  };
};

export type BrainUpdated = {
  readonly type: 'BrainUpdated';
  readonly data: {
    readonly brainId: number;
    /** Only the fields that changed. */
    readonly changes: Partial<BrainFields>;
    readonly updatedBy: number;
    readonly updatedAt: string;
  };
};

export type BrainDeleted = {
  readonly type: 'BrainDeleted';
  readonly data: {
    readonly brainId: number;
    /** File uploads removed with it (interface-spec 2.7 rule 5). */
    readonly fileUploadIds: readonly string[];
    readonly deletedBy: number;
    readonly deletedAt: string;
  };
};

/** A user given access to the brain (uploader or staff). */
export type BrainCollaboratorAdded = {
  readonly type: 'BrainCollaboratorAdded';
  readonly data: {
    readonly brainId: number;
    readonly userId: number;
    readonly role: CollaboratorRole;
    readonly addedBy: number;
    readonly addedAt: string;
  };
};

/** A collaborator added again with another role. */
export type BrainCollaboratorRoleChanged = {
  readonly type: 'BrainCollaboratorRoleChanged';
  readonly data: {
    readonly brainId: number;
    readonly userId: number;
    readonly role: CollaboratorRole;
    readonly previousRole: CollaboratorRole;
    readonly changedBy: number;
    readonly changedAt: string;
  };
};

export type BrainCollaboratorRemoved = {
  readonly type: 'BrainCollaboratorRemoved';
  readonly data: {
    readonly brainId: number;
    readonly userId: number;
    readonly removedBy: number;
    readonly removedAt: string;
  };
};

/**
 * The history's record that an embargo ended (by the processor's timer, at or after
 * `embargoUntil`). Not needed for correctness: an embargo past its time reads as public without it.
 */
export type EmbargoLifted = {
  readonly type: 'EmbargoLifted';
  readonly data: {
    readonly brainId: number;
    readonly embargoUntil: string;
    readonly liftedAt: string;
  };
};

export type BrainEvent =
  | BrainCreated
  | BrainUpdated
  | BrainDeleted
  | BrainCollaboratorAdded
  | BrainCollaboratorRoleChanged
  | BrainCollaboratorRemoved
  | EmbargoLifted;

export const BRAIN_EVENT_TYPES: ReadonlySet<BrainEvent['type']> = new Set([
  'BrainCreated',
  'BrainUpdated',
  'BrainDeleted',
  'BrainCollaboratorAdded',
  'BrainCollaboratorRoleChanged',
  'BrainCollaboratorRemoved',
  'EmbargoLifted',
]);

export interface Collaborator {
  readonly role: CollaboratorRole;
  readonly addedAt: string;
}

export interface ActiveBrain extends BrainFields {
  readonly status: 'active';
  readonly brainId: number;
  readonly readableId: string;
  readonly uuid: string;
  readonly uploaderId: number;
  readonly fileUploadIds: readonly string[];
  /** When it was uploaded (date_uploaded), for answers built from the stream. */
  readonly createdAt: string;
  /** By user id (as a string key). */
  readonly collaborators: Readonly<Record<string, Collaborator>>;
}

/** The user ids of a brain's collaborators (visibility.VisibilityFacts). */
export const collaboratorIdsOf = (brain: ActiveBrain): number[] =>
  Object.keys(brain.collaborators).map(Number);

export type BrainState = { readonly status: 'none' } | ActiveBrain | { readonly status: 'deleted' };

export const initialBrainState = (): BrainState => ({ status: 'none' });

export function evolveBrain(state: BrainState, event: BrainEvent): BrainState {
  switch (event.type) {
    case 'BrainCreated': {
      const { fileUploadId, ...rest } = event.data;
      return {
        ...rest,
        ...createdVisibility(event.data),
        status: 'active',
        fileUploadIds: fileUploadId ? [fileUploadId] : [],
        collaborators: {},
      };
    }
    case 'BrainUpdated':
      return state.status === 'active' ? { ...state, ...event.data.changes } : state;
    case 'BrainDeleted':
      return { status: 'deleted' };
    case 'BrainCollaboratorAdded':
    case 'BrainCollaboratorRoleChanged': {
      if (state.status !== 'active') return state;
      const { userId, role } = event.data;
      const addedAt =
        event.type === 'BrainCollaboratorAdded'
          ? event.data.addedAt
          : (state.collaborators[String(userId)]?.addedAt ?? event.data.changedAt);
      return { ...state, collaborators: { ...state.collaborators, [String(userId)]: { role, addedAt } } };
    }
    case 'BrainCollaboratorRemoved': {
      if (state.status !== 'active') return state;
      const { [String(event.data.userId)]: _removed, ...kept } = state.collaborators;
      return { ...state, collaborators: kept };
    }
    case 'EmbargoLifted':
      return state.status === 'active' ? { ...state, visibility: 'public' } : state;
  }
}

export const brainDecider = { initialState: initialBrainState, evolve: evolveBrain };
export const brainStreamName = (brainId: number): string => `brain-${brainId}`;

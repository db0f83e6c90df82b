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
}

export type BrainCreated = {
  readonly type: 'BrainCreated';
  readonly data: BrainFields & {
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

export type BrainEvent = BrainCreated | BrainUpdated | BrainDeleted;

export interface ActiveBrain extends BrainFields {
  readonly status: 'active';
  readonly brainId: number;
  readonly readableId: string;
  readonly uuid: string;
  readonly uploaderId: number;
  readonly fileUploadIds: readonly string[];
  /** When it was uploaded (date_uploaded), for answers built from the stream. */
  readonly createdAt: string;
}

export type BrainState = { readonly status: 'none' } | ActiveBrain | { readonly status: 'deleted' };

export const initialBrainState = (): BrainState => ({ status: 'none' });

export function evolveBrain(state: BrainState, event: BrainEvent): BrainState {
  switch (event.type) {
    case 'BrainCreated': {
      const { fileUploadId, ...rest } = event.data;
      return { ...rest, status: 'active', fileUploadIds: fileUploadId ? [fileUploadId] : [] };
    }
    case 'BrainUpdated':
      return state.status === 'active' ? { ...state, ...event.data.changes } : state;
    case 'BrainDeleted':
      return { status: 'deleted' };
  }
}

export const brainDecider = { initialState: initialBrainState, evolve: evolveBrain };
export const brainStreamName = (brainId: number): string => `brain-${brainId}`;

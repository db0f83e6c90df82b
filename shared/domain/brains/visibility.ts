/**
 * Who may see a brain (decisions.md "Visibility and collaborators"): the one rule every route,
 * list, count, facet, search answer and message applies. This module is the rule in TypeScript
 * (the deciders, the replays, the relay and the tests' reference model); its SQL form is
 * shared/query/brainVisibility.ts and its search form lives in each SearchIndex adapter. All of
 * them must agree with `canSeeBrain`.
 */

export const VISIBILITIES = ['public', 'private', 'embargoed'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export const COLLABORATOR_ROLES = ['viewer', 'editor'] as const;
export type CollaboratorRole = (typeof COLLABORATOR_ROLES)[number];

export const isVisibility = (value: unknown): value is Visibility =>
  typeof value === 'string' && (VISIBILITIES as readonly string[]).includes(value);

export const isCollaboratorRole = (value: unknown): value is CollaboratorRole =>
  typeof value === 'string' && (COLLABORATOR_ROLES as readonly string[]).includes(value);

/** Who asks: a user (staff or not), or nobody (userId null: anonymous). */
export interface Viewer {
  readonly userId: number | null;
  readonly isStaff: boolean;
}

export const ANONYMOUS: Viewer = { userId: null, isStaff: false };

/** The viewer of a request's principal (undefined: anonymous). */
export const viewerOf = (
  principal: { readonly userId: number; readonly isStaff: boolean } | undefined,
): Viewer => (principal ? { userId: principal.userId, isStaff: principal.isStaff } : ANONYMOUS);

/** What the rule reads of a brain. */
export interface VisibilityFacts {
  readonly visibility: Visibility;
  /** ISO time; null unless embargoed (kept after the embargo is lifted). */
  readonly embargoUntil: string | null;
  readonly uploaderId: number;
  /** User ids of its collaborators, whatever their role. */
  readonly collaboratorIds: readonly number[];
}

/**
 * The visibility a brain reads as at `nowMs`: an embargo whose time has passed reads as public
 * (with its `embargo_until` kept), with or without the EmbargoLifted event recorded yet.
 */
export function effectiveVisibility(
  brain: Pick<VisibilityFacts, 'visibility' | 'embargoUntil'>,
  nowMs: number,
): Visibility {
  if (brain.visibility !== 'embargoed') return brain.visibility;
  return brain.embargoUntil !== null && Date.parse(brain.embargoUntil) <= nowMs ? 'public' : 'embargoed';
}

/** Whether the viewer may see the brain at `nowMs`: public (in effect), staff, uploader or collaborator. */
export function canSeeBrain(brain: VisibilityFacts, viewer: Viewer, nowMs: number): boolean {
  if (effectiveVisibility(brain, nowMs) === 'public' || viewer.isStaff) return true;
  if (viewer.userId === null) return false;
  return brain.uploaderId === viewer.userId || brain.collaboratorIds.includes(viewer.userId);
}

/** What a viewer may do to a brain they see. */
export type BrainAccess = 'none' | 'read' | 'edit' | 'own';

/**
 * `own`: staff or the uploader (everything: visibility, collaborators, delete). `edit`: an editor
 * (descriptive fields only). `read`: anyone else who sees it. `none`: not seen (answer 404).
 */
export function brainAccess(
  brain: VisibilityFacts & {
    readonly collaborators?: Readonly<Record<string, { readonly role: CollaboratorRole }>>;
  },
  viewer: Viewer,
  nowMs: number,
): BrainAccess {
  if (viewer.isStaff || (viewer.userId !== null && brain.uploaderId === viewer.userId)) return 'own';
  if (!canSeeBrain(brain, viewer, nowMs)) return 'none';
  if (viewer.userId !== null && brain.collaborators?.[String(viewer.userId)]?.role === 'editor')
    return 'edit';
  return 'read';
}

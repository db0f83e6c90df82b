import { type Static, Type } from '@sinclair/typebox';
import { COLLABORATOR_ROLES, type CollaboratorRole } from '#shared/domain/brains/visibility';

/** A brain's collaborator as both sides answer it (decisions.md "Visibility and collaborators"). */
export const collaboratorSchema = Type.Object({
  user: Type.Object({ id: Type.Integer(), username: Type.String() }),
  role: Type.Unsafe<CollaboratorRole>({ type: 'string', enum: [...COLLABORATOR_ROLES] }),
  added_at: Type.String({ format: 'date-time' }),
});
export type CollaboratorJson = Static<typeof collaboratorSchema>;

export const collaboratorJson = (
  user: { readonly id: number; readonly username: string },
  role: CollaboratorRole,
  addedAt: Date | string,
): CollaboratorJson => ({
  user: { id: user.id, username: user.username },
  role,
  added_at: new Date(addedAt).toISOString(),
});

/**
 * Who sees a file upload beyond its uploader and staff (decisions.md "Visibility and
 * collaborators"): the collaborators of its brain, who read and download it; and what of it they see.
 */
import type { Principal } from '#shared/auth/principal';
import type { FileUploadRow } from '#shared/views/fileUploadViews';
import type { UploaderEmailVisibility } from '#shared/views/brainViews';

/**
 * Whether the user (a placeholder) is a collaborator of the brain the upload (f) belongs to:
 * attached to it, or its file. Collaborators see the brain whatever its visibility, and with it
 * its file uploads (decisions.md "Visibility and collaborators"). Found from the user's
 * collaborations (few), not from the brains.
 */
export const sharedWithSql = (user: string): string =>
  `EXISTS (SELECT 1 FROM brain_collaborators bc JOIN brains xb ON xb.id = bc.brain_id
            WHERE bc.user_id = ${user}
              AND (xb.id = f.associated_brain_id OR xb.file_upload_id::uuid = f.id))`;

/**
 * The row as the caller may see it: with UPLOADER_EMAIL_VISIBILITY=owner, a collaborator sees
 * an empty uploader email, as on the brain's shapes.
 */
export function asSeenBy<Row extends Pick<FileUploadRow, 'uploader_id' | 'uploader_email'>>(
  row: Row,
  principal: Principal,
  uploaderEmails: UploaderEmailVisibility,
): Row {
  const shown = uploaderEmails === 'everyone' || principal.isStaff || principal.userId === row.uploader_id;
  return shown || row.uploader_email === null ? row : { ...row, uploader_email: '' };
}

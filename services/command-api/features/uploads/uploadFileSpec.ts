import { randomUUID } from 'node:crypto';
import { ValidationError } from '#shared/errors/httpErrors';
import { fileNameProblem, uploadExtension } from '#shared/domain/uploads/fileRules';
import type { FileFieldSpec } from '#shared/multipart/parseMultipart';

/**
 * The multipart spec of an uploaded data file (a standalone upload's `file`, a brain's `file` or
 * `image`): an unsupported file name is refused before any of its bytes is stored (keyFor runs
 * first), and the file is streamed to a fresh key under uploads/, at most maxBytes.
 */
export const uploadFileSpec = (field: 'file' | 'image', maxBytes: number): FileFieldSpec => ({
  keyFor: ({ filename }) => {
    const problem = fileNameProblem(field, filename);
    if (problem) throw ValidationError.field(field, problem);
    return `uploads/${randomUUID()}${uploadExtension(filename) ?? ''}`;
  },
  maxBytes,
});

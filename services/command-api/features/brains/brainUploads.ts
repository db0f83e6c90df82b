import type { CommandContext } from '#shared/commandHandling/commandContext';
import type { Actor } from '#shared/domain/actor';
import type { StoredFile } from '#shared/multipart/parseMultipart';
import type { BidsSidecar } from '#shared/domain/uploads/sidecar';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { recordUpload } from '#services/command-api/features/uploads/recordUpload';

/** Records a brain's stored file as an upload of it (status uploaded); resolves with its id. */
export async function recordBrainUpload(
  deps: CommandDeps,
  file: StoredFile,
  brainId: number,
  sidecar: BidsSidecar | null,
  actor: Actor,
  cmd: CommandContext,
  now: string,
): Promise<string> {
  const upload = { name: file.filename, associatedBrainId: brainId, sidecar };
  return (await recordUpload(deps, file, upload, actor, cmd, now)).data.uploadId;
}

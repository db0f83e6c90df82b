import { ConflictError, NotFoundError } from '../../errors/httpErrors';
import type { Actor } from '../actor';
import type { UploadDeleted, UploadEvent, UploadReceivedData, UploadState } from './events';

export type ReceiveUpload = { readonly type: 'ReceiveUpload'; readonly data: UploadReceivedData };

export type DeleteUpload = {
  readonly type: 'DeleteUpload';
  readonly data: {
    readonly reason: UploadDeleted['data']['reason'];
    readonly actor: Actor;
    readonly now: string;
  };
};

export type UploadCommand = ReceiveUpload | DeleteUpload;

/** Deleting is idempotent: a brain's delete may be retried after it removed some of its uploads. */
export function decideUpload(command: UploadCommand, state: UploadState): UploadEvent[] {
  switch (command.type) {
    case 'ReceiveUpload':
      if (state.status !== 'none') throw new ConflictError(`Upload ${command.data.uploadId} already exists.`);
      return [{ type: 'UploadReceived', data: command.data }];
    case 'DeleteUpload': {
      if (state.status === 'deleted') return [];
      if (state.status === 'none') throw new NotFoundError();
      const { reason, actor, now } = command.data;
      return [
        {
          type: 'UploadDeleted',
          data: { uploadId: state.uploadId, reason, deletedBy: actor.userId, deletedAt: now },
        },
      ];
    }
    default: {
      const unknown: never = command;
      throw new Error(`unknown upload command ${JSON.stringify(unknown)}`);
    }
  }
}

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ByteSource } from './byteSource';

/** A ByteSource over a local file (tests, the bench, the local-disk blob store). */
export async function fileByteSource(path: string): Promise<ByteSource> {
  const { size } = await stat(path);
  return {
    size,
    open: (range) => {
      const start = range?.start ?? 0;
      const end = range?.end ?? size - 1;
      return Promise.resolve(createReadStream(path, { start, end: Math.max(end, start - 1) }));
    },
  };
}

import { Readable } from 'node:stream';
import type { ByteSource } from '#shared/formats/byteSource';

/** A source whose streams fail after `goodBytes` bytes, as a flaky disk or network would. */
export function failingSource(size: number, goodBytes: number, error: Error): ByteSource {
  return {
    size,
    open: () =>
      Promise.resolve(
        new Readable({
          read() {
            if (goodBytes > 0) {
              const chunk = Buffer.alloc(Math.min(goodBytes, 4096));
              goodBytes -= chunk.length;
              this.push(chunk);
            } else this.destroy(error);
          },
        }),
      ),
  };
}

/** A source whose open() itself rejects. */
export function unreachableSource(size: number, error: Error): ByteSource {
  return { size, open: () => Promise.reject(error) };
}

/** A source over bytes in memory (small crafted inputs). */
export function bufferSource(bytes: Buffer): ByteSource {
  return {
    size: bytes.length,
    open: (range) =>
      Promise.resolve(
        Readable.from([bytes.subarray(range?.start ?? 0, (range?.end ?? bytes.length - 1) + 1)]),
      ),
  };
}

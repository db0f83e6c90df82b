import { fail } from '#shared/formats/formatFailure';

const frameMagic = 0xfd2fb528;

/**
 * The bytes a zstd stream declares it decodes to: the sum of its frames' content sizes, read from
 * the frame headers and walking each frame's blocks to the next (skippable frames add nothing).
 * Undefined when a frame does not declare its size (a streaming encoder's frame).
 */
export function zstdContentSize(data: Uint8Array, what: string): number | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const corrupt = (): never => fail(`${what}: corrupt zstd data`);
  let at = 0;
  let total = 0;
  while (at < data.length) {
    if (at + 4 > data.length) corrupt();
    const magic = view.getUint32(at, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      if (at + 8 > data.length) corrupt();
      at += 8 + view.getUint32(at + 4, true);
      continue;
    }
    if (magic !== frameMagic) corrupt();
    const descriptor = data[at + 4] ?? corrupt();
    const singleSegment = (descriptor >> 5) & 1;
    const sizeFlag = descriptor >> 6;
    at += 5 + (singleSegment ? 0 : 1) + ([0, 1, 2, 4][descriptor & 3] ?? 0);
    const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][sizeFlag] ?? 0;
    if (at + sizeBytes > data.length) corrupt();
    if (sizeBytes === 0) return undefined;
    total +=
      sizeBytes === 1
        ? view.getUint8(at)
        : sizeBytes === 2
          ? view.getUint16(at, true) + 256
          : sizeBytes === 4
            ? view.getUint32(at, true)
            : Number(view.getBigUint64(at, true));
    at += sizeBytes;
    at = skipBlocks(data, at, corrupt) + ((descriptor >> 2) & 1 ? 4 : 0);
  }
  return total;
}

/** The offset after a frame's last block. */
function skipBlocks(data: Uint8Array, start: number, corrupt: () => never): number {
  let at = start;
  for (;;) {
    if (at + 3 > data.length) corrupt();
    const header = (data[at] ?? 0) | ((data[at + 1] ?? 0) << 8) | ((data[at + 2] ?? 0) << 16);
    const type = (header >> 1) & 3;
    if (type === 3) corrupt();
    at += 3 + (type === 1 ? 1 : header >>> 3);
    if (header & 1) return at;
  }
}

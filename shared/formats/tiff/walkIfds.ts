import { fail } from '#shared/formats/formatFailure';
import type { BlockSource } from './blockSource';

export const maxTiffPages = 100_000;

/** Classic TIFF or BigTIFF, in either byte order, from its first 16 bytes. */
export interface TiffLayout {
  readonly littleEndian: boolean;
  readonly bigTiff: boolean;
  readonly firstIfd: number;
}

export function tiffLayout(head: Buffer): TiffLayout | undefined {
  if (head.length < 8) return undefined;
  const order = head.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const littleEndian = order === 'II';
  const magic = littleEndian ? head.readUInt16LE(2) : head.readUInt16BE(2);
  if (magic === 42) {
    return {
      littleEndian,
      bigTiff: false,
      firstIfd: littleEndian ? head.readUInt32LE(4) : head.readUInt32BE(4),
    };
  }
  if (magic !== 43 || head.length < 16) return undefined;
  const offset = littleEndian ? head.readBigUInt64LE(8) : head.readBigUInt64BE(8);
  return { littleEndian, bigTiff: true, firstIfd: Number(offset) };
}

/**
 * Where each page's directory (IFD) starts, in the main chain. Walks only the chain's counts and
 * next-offsets; a chain that loops, leaves the file or exceeds maxTiffPages fails instead of running
 * on. (geotiff finds page n by recursing through pages n-1 … 0, one stack frame each: tens of
 * thousands of pages overflow the stack, so pages are opened by these offsets instead.)
 */
export async function pageOffsets(source: BlockSource, layout: TiffLayout): Promise<number[]> {
  const seen = new Set<number>();
  const offsets: number[] = [];
  let offset = layout.firstIfd;
  while (offset !== 0) {
    if (seen.has(offset)) fail(`corrupt TIFF file: its page chain loops back to byte ${offset}`);
    if (seen.size >= maxTiffPages) fail(`TIFF file with more than ${maxTiffPages} pages`);
    if (offset + (layout.bigTiff ? 8 : 2) > source.fileSize) {
      fail(`truncated TIFF file: page ${seen.size + 1} at byte ${offset}, the file has ${source.fileSize}`);
    }
    seen.add(offset);
    offsets.push(offset);
    offset = await nextIfd(source, layout, offset);
  }
  if (offsets.length === 0) fail('corrupt TIFF file: no pages');
  return offsets;
}

async function nextIfd(source: BlockSource, layout: TiffLayout, offset: number): Promise<number> {
  const [countBytes, entryBytes, offsetBytes] = layout.bigTiff ? [8, 20, 8] : [2, 12, 4];
  const count = readUnsigned(
    Buffer.from((await source.fetch([{ offset, length: countBytes }]))[0]!),
    countBytes,
    layout,
  );
  const at = offset + countBytes + count * entryBytes;
  if (at + offsetBytes > source.fileSize) {
    fail(`truncated TIFF file: a page's directory at byte ${offset} runs past the end`);
  }
  return readUnsigned(
    Buffer.from((await source.fetch([{ offset: at, length: offsetBytes }]))[0]!),
    offsetBytes,
    layout,
  );
}

function readUnsigned(bytes: Buffer, width: number, layout: TiffLayout): number {
  if (bytes.length < width) fail('truncated TIFF file: a page directory runs past the end');
  const le = layout.littleEndian;
  if (width === 2) return le ? bytes.readUInt16LE(0) : bytes.readUInt16BE(0);
  if (width === 4) return le ? bytes.readUInt32LE(0) : bytes.readUInt32BE(0);
  return Number(le ? bytes.readBigUInt64LE(0) : bytes.readBigUInt64BE(0));
}

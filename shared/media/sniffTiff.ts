import { dimensions, type Dimensions } from './dimensions';

const IMAGE_WIDTH = 256;
const IMAGE_LENGTH = 257;
const SHORT = 3;
const LONG = 4;
const LONG8 = 16;

/** Classic TIFF (42: 32-bit offsets, 12-byte entries) and BigTIFF (43: 64-bit offsets, 20-byte entries). */
interface Layout {
  readonly read: (offset: number, bytes: 2 | 4 | 8) => number | undefined;
  readonly firstIfd: number | undefined;
  readonly countBytes: 2 | 8;
  readonly entryBytes: 12 | 20;
}

/**
 * Either byte order ("II" little-endian, "MM" big-endian), then the first IFD's ImageWidth and
 * ImageLength entries. The first IFD must lie within head: writers that put it at the end of a big
 * file are not recognised from a head alone.
 */
export function sniffTiff(head: Buffer): Dimensions | undefined {
  const layout = layoutOf(head);
  if (!layout || layout.firstIfd === undefined) return undefined;
  const count = layout.read(layout.firstIfd, layout.countBytes);
  if (count === undefined || count === 0) return undefined;
  let width: number | undefined;
  let height: number | undefined;
  for (let index = 0; index < count && (width === undefined || height === undefined); index++) {
    const entry = layout.firstIfd + layout.countBytes + index * layout.entryBytes;
    const tag = layout.read(entry, 2);
    if (tag === undefined) break; // the IFD runs past head
    if (tag === IMAGE_WIDTH) width = entryValue(layout, entry);
    if (tag === IMAGE_LENGTH) height = entryValue(layout, entry);
  }
  return width === undefined || height === undefined ? undefined : dimensions(width, height);
}

function layoutOf(head: Buffer): Layout | undefined {
  const order = head.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const read = reader(head, order === 'II');
  const version = read(2, 2);
  if (version === 42) return { read, firstIfd: atLeast(read(4, 4), 8), countBytes: 2, entryBytes: 12 };
  if (version === 43 && read(4, 2) === 8 && read(6, 2) === 0) {
    return { read, firstIfd: atLeast(read(8, 8), 16), countBytes: 8, entryBytes: 20 };
  }
  return undefined;
}

/** The value of a single SHORT/LONG(/LONG8) entry, stored inline right after the count. */
function entryValue(layout: Layout, entry: number): number | undefined {
  const type = layout.read(entry + 2, 2);
  const countBytes = layout.entryBytes === 12 ? 4 : 8;
  if (layout.read(entry + 4, countBytes) !== 1) return undefined;
  const value = entry + 4 + countBytes;
  if (type === SHORT) return layout.read(value, 2);
  if (type === LONG) return layout.read(value, 4);
  if (type === LONG8 && layout.entryBytes === 20) return layout.read(value, 8);
  return undefined;
}

/** Bounds-checked unsigned reads in the file's byte order; undefined past the end of head. */
function reader(head: Buffer, littleEndian: boolean) {
  return (offset: number, bytes: 2 | 4 | 8): number | undefined => {
    if (offset < 0 || offset + bytes > head.length) return undefined;
    if (bytes === 8) {
      const value = littleEndian ? head.readBigUInt64LE(offset) : head.readBigUInt64BE(offset);
      return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
    }
    return littleEndian ? head.readUIntLE(offset, bytes) : head.readUIntBE(offset, bytes);
  };
}

/** An IFD cannot overlap the file header. */
function atLeast(offset: number | undefined, minimum: number): number | undefined {
  return offset !== undefined && offset >= minimum ? offset : undefined;
}

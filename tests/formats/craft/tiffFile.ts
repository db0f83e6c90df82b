/** One page of a crafted classic (little-endian) TIFF: its fields and its strips or tiles, stored as given. */
export interface TiffPage {
  readonly width: number;
  readonly height: number;
  readonly compression: number;
  readonly bitsPerSample?: number;
  readonly photometric?: number;
  readonly predictor?: number;
  /** Strips of this many rows (default: the whole height), or tiles when `tile` is set. */
  readonly rowsPerStrip?: number;
  readonly tile?: { readonly width: number; readonly length: number };
  readonly blocks: readonly Buffer[];
  /** Declare this many strips or tiles, every one of them the first block (the rest are not written). */
  readonly repeatFirstBlock?: number;
  readonly jpegTables?: Buffer;
}

const SHORT = 3;
const LONG = 4;
const UNDEFINED = 7;

type Entry = readonly [tag: number, type: number, values: readonly number[] | Buffer];

/**
 * A TIFF of the given pages, each page's blocks followed by its directory (IFD) and the directory's
 * out-of-line values; the directories chain in order. Values are what the page says, unchecked:
 * a crafted file may declare anything.
 */
export function tiffFile(pages: readonly TiffPage[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0x49, 0x49, 42, 0, 0, 0, 0, 0])];
  let length = 8;
  // Where the previous directory's "next IFD" offset goes: the header's first-IFD field at first.
  let previousNext = { buffer: parts[0]!, at: 4 };
  for (const page of pages) {
    let offsets = page.blocks.map((block) => {
      const at = length;
      parts.push(block);
      length += block.length;
      return at;
    });
    let counts = page.blocks.map((block) => block.length);
    if (page.repeatFirstBlock !== undefined) {
      offsets = new Array<number>(page.repeatFirstBlock).fill(offsets[0] ?? 0);
      counts = new Array<number>(page.repeatFirstBlock).fill(counts[0] ?? 0);
    }
    const ifdAt = length + (length % 2);
    if (ifdAt !== length) parts.push(Buffer.alloc(1));
    const entries = entriesOf(page, offsets, counts);
    const ifd = directory(ifdAt, entries);
    parts.push(ifd);
    previousNext.buffer.writeUInt32LE(ifdAt, previousNext.at);
    previousNext = { buffer: ifd, at: 2 + entries.length * 12 };
    length = ifdAt + ifd.length;
  }
  return Buffer.concat(parts);
}

function entriesOf(page: TiffPage, offsets: number[], counts: number[]): Entry[] {
  const entries: Entry[] = [
    [256, LONG, [page.width]],
    [257, LONG, [page.height]],
    [258, SHORT, [page.bitsPerSample ?? 8]],
    [259, SHORT, [page.compression]],
    [262, SHORT, [page.photometric ?? 1]],
    [277, SHORT, [1]],
  ];
  if (page.tile) {
    entries.push(
      [322, LONG, [page.tile.width]],
      [323, LONG, [page.tile.length]],
      [324, LONG, offsets],
      [325, LONG, counts],
    );
  } else {
    entries.push([273, LONG, offsets], [278, LONG, [page.rowsPerStrip ?? page.height]], [279, LONG, counts]);
  }
  if (page.predictor !== undefined) entries.push([317, SHORT, [page.predictor]]);
  if (page.jpegTables) entries.push([347, UNDEFINED, page.jpegTables]);
  return entries.sort((a, b) => a[0] - b[0]);
}

/** An IFD at byte `at`: count, 12-byte entries, next offset 0, then values over 4 bytes. */
function directory(at: number, entries: readonly Entry[]): Buffer {
  const head = Buffer.alloc(2 + entries.length * 12 + 4);
  head.writeUInt16LE(entries.length, 0);
  const extra: Buffer[] = [];
  let extraAt = at + head.length;
  entries.forEach(([tag, type, values], index) => {
    const bytes = encode(type, values);
    const position = 2 + index * 12;
    head.writeUInt16LE(tag, position);
    head.writeUInt16LE(type, position + 2);
    head.writeUInt32LE(Buffer.isBuffer(values) ? values.length : values.length, position + 4);
    if (bytes.length <= 4) bytes.copy(head, position + 8);
    else {
      head.writeUInt32LE(extraAt, position + 8);
      const padded = bytes.length % 2 ? Buffer.concat([bytes, Buffer.alloc(1)]) : bytes;
      extra.push(padded);
      extraAt += padded.length;
    }
  });
  return Buffer.concat([head, ...extra]);
}

function encode(type: number, values: readonly number[] | Buffer): Buffer {
  if (Buffer.isBuffer(values)) return values;
  const width = type === SHORT ? 2 : 4;
  const bytes = Buffer.alloc(values.length * width);
  values.forEach((value, index) =>
    width === 2 ? bytes.writeUInt16LE(value, index * 2) : bytes.writeUInt32LE(value, index * 4),
  );
  return bytes;
}

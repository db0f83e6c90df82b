/**
 * A baseline grayscale JPEG that declares `width` × `height` pixels in its frame header (SOF0), all
 * mid-gray: one-code Huffman tables (DC difference 0, then end of block), 2 bits of entropy data per
 * 8×8 block, for `blocks` blocks (default: as many as the frame has).
 */
export function jpegGray(width: number, height: number, blocks?: number): Buffer {
  const count = blocks ?? Math.ceil(width / 8) * Math.ceil(height / 8);
  const segment = (marker: number, body: number[]): number[] => [
    0xff,
    marker,
    (body.length + 2) >> 8,
    (body.length + 2) & 0xff,
    ...body,
  ];
  const oneCodeTable = (tableClass: number): number[] =>
    segment(0xc4, [tableClass << 4, 1, ...new Array<number>(15).fill(0), 0x00]);
  return Buffer.concat([
    Buffer.from([
      0xff,
      0xd8,
      ...segment(0xdb, [0x00, ...new Array<number>(64).fill(1)]),
      ...segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
      ...oneCodeTable(0),
      ...oneCodeTable(1),
      ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    ]),
    Buffer.alloc(Math.ceil((count * 2) / 8)),
    Buffer.from([0xff, 0xd9]),
  ]);
}

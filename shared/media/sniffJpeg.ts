import { dimensions, type Dimensions } from './dimensions';

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;
/** Markers without a length field: TEM and RST0-7. */
const isStandalone = (marker: number) => marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7);
/** SOF0-15, except DHT (c4), JPG (c8) and DAC (cc) which share the range. */
const isFrameHeader = (marker: number) =>
  marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
/** Segments that may come before the frame header (DQT, DHT, DRI, APPn, COM, ...). */
const isSegment = (marker: number) =>
  marker >= 0xc0 && marker <= 0xfe && marker !== SOI && marker !== EOI && marker !== SOS;

/**
 * Walks the marker segments after SOI (APP0/APP1 Exif/ICC profiles, tables) to the frame header,
 * which holds the size. Anything that is not a well-formed marker sequence is not a JPEG.
 */
export function sniffJpeg(head: Buffer): Dimensions | undefined {
  if (head.length < 4 || head[0] !== 0xff || head[1] !== SOI) return undefined;
  let offset = 2;
  while (offset + 4 <= head.length) {
    if (head[offset] !== 0xff) return undefined;
    const marker = head[offset + 1] ?? 0;
    if (marker === 0xff)
      offset += 1; // fill byte
    else if (isStandalone(marker)) offset += 2;
    else if (isFrameHeader(marker)) return readFrameHeader(head, offset);
    else if (isSegment(marker) && head.readUInt16BE(offset + 2) >= 2)
      offset += 2 + head.readUInt16BE(offset + 2);
    else return undefined; // SOS or EOI before any frame header, a reserved marker, a broken length
  }
  return undefined;
}

function readFrameHeader(head: Buffer, offset: number): Dimensions | undefined {
  if (offset + 10 > head.length) return undefined;
  const length = head.readUInt16BE(offset + 2);
  const precision = head[offset + 4] ?? 0;
  const components = head[offset + 9] ?? 0;
  if (![8, 12, 16].includes(precision) || components < 1 || components > 4 || length !== 8 + 3 * components)
    return undefined;
  return dimensions(head.readUInt16BE(offset + 7), head.readUInt16BE(offset + 5));
}

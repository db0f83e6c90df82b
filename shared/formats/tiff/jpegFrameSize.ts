/** The width, height and component count a JPEG's frame headers (SOFn) declare. */
export interface JpegFrame {
  readonly width: number;
  readonly height: number;
  readonly components: number;
}

const isFrameMarker = (marker: number): boolean =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/**
 * Every frame header in a JPEG stream, found by walking its marker segments (their lengths are
 * skipped, so bytes inside a segment are never mistaken for a marker; in entropy-coded data a 0xFF
 * byte is always stuffed or a restart marker).
 */
export function jpegFrames(data: Uint8Array): JpegFrame[] {
  const frames: JpegFrame[] = [];
  let at = 0;
  while (at + 1 < data.length) {
    if (data[at] !== 0xff) {
      at++;
      continue;
    }
    const marker = data[at + 1] ?? 0;
    if (marker === 0xff || marker === 0x00 || (marker >= 0xd0 && marker <= 0xd9) || marker === 0x01) {
      at += marker === 0xff ? 1 : 2;
      continue;
    }
    const length = ((data[at + 2] ?? 0) << 8) | (data[at + 3] ?? 0);
    if (isFrameMarker(marker)) {
      frames.push({
        height: ((data[at + 5] ?? 0) << 8) | (data[at + 6] ?? 0),
        width: ((data[at + 7] ?? 0) << 8) | (data[at + 8] ?? 0),
        components: data[at + 9] ?? 0,
      });
    }
    at += 2 + length;
  }
  return frames;
}

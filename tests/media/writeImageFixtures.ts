/**
 * Writes tests/fixtures/images from the encoders in imageEncoders.ts. The files are committed;
 * rerun with `npx tsx tests/media/writeImageFixtures.ts` only to change them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  encodeBmp,
  encodeGif,
  encodeJpeg,
  encodePng,
  encodeTiff,
  encodeWebpExtended,
  encodeWebpLossless,
  LOSSY_WEBP_1X1,
} from './imageEncoders';

export const IMAGE_FIXTURES_DIR = path.join(__dirname, '..', 'fixtures', 'images');

const fixtures: Record<string, Buffer> = {
  'sample.png': encodePng(32, 16),
  'sample.jpg': encodeJpeg(),
  'sample-exif-progressive.jpg': encodeJpeg({ exif: true, progressive: true }),
  'sample.gif': encodeGif(),
  'sample-lossless.webp': encodeWebpLossless(4, 3, [255, 200, 40, 90]),
  'sample-lossy.webp': LOSSY_WEBP_1X1,
  'sample-extended.webp': encodeWebpExtended(5, 7),
  'sample.bmp': encodeBmp(5, 3),
  'sample-topdown.bmp': encodeBmp(5, 3, { topDown: true }),
  'sample-le.tif': encodeTiff(7, 5, 'II'),
  'sample-be.tif': encodeTiff(7, 5, 'MM'),
  'not-an-image.png': Buffer.from('This is a text file that someone renamed to .png.\n'),
};

if (require.main === module) {
  for (const [name, bytes] of Object.entries(fixtures))
    writeFileSync(path.join(IMAGE_FIXTURES_DIR, name), bytes);
}

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromArrayBuffer } from 'geotiff';
import { fileByteSource } from '#shared/formats/fileByteSource';
import { InspectionBudget } from '#shared/formats/inspectionBudget';
import { inspectUpload } from '#shared/formats/inspectUpload';
import { defaultInspectionLimits } from '#shared/formats/inspectionLimits';
import { boundedDecoderPool } from '#shared/formats/tiff/boundedDecoders';
import { pythonJson } from './python';

/**
 * Strips that libtiff itself compressed (LZW with and without the predictor, PackBits, Adobe
 * deflate, JPEG): the bounded decoders must read them exactly as geotiff's own decoders do.
 */
let dir: string;
let written: string[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'libtiff-'));
  written = await pythonJson<string[]>('writeLibtiffFixtures.py', [dir]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function rastersOf(name: string, bounded: boolean): Promise<number[]> {
  const bytes = await readFile(join(dir, name));
  const tiff = await fromArrayBuffer(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const page = await tiff.getImage(0);
  const budget = new InspectionBudget(defaultInspectionLimits, bytes.length);
  const pool = bounded ? boundedDecoderPool(budget, { kind: 'strip', rows: page.getTileHeight() }) : null;
  const [band] = (await page.readRasters({ pool })) as unknown as ArrayLike<number>[];
  return Array.from(band ?? []);
}

it('libtiff wrote every lossless compression the preview decodes', () => {
  expect(written).toEqual(
    expect.arrayContaining([
      'none.tif',
      'lzw.tif',
      'lzw_predictor.tif',
      'packbits.tif',
      'adobe_deflate.tif',
      'adobe_deflate_predictor.tif',
    ]),
  );
});

it('bounded decoders give the same pixels as geotiff’s own, and lossless ones the uncompressed pixels', async () => {
  const plain = await rastersOf('none.tif', false);
  expect(plain).toHaveLength(300 * 200);
  for (const name of written) {
    const bounded = await rastersOf(name, true);
    expect({ name, same: bounded.every((value, index) => value === plain[index]) }).toEqual({
      name,
      same: name !== 'jpeg.tif',
    });
    expect({ name, bounded }).toEqual({ name, bounded: await rastersOf(name, false) });
  }
});

it('their previews are those of the uncompressed file', async () => {
  const preview = async (name: string): Promise<Buffer | null> => {
    const result = await inspectUpload(await fileByteSource(join(dir, name)), name);
    if (!result.ok) throw new Error(`${name}: ${result.reason}`);
    return result.preview;
  };
  const plain = await preview('none.tif');
  expect(plain).toBeInstanceOf(Buffer);
  for (const name of written.filter((file) => file !== 'jpeg.tif')) {
    expect({ name, png: await preview(name) }).toEqual({ name, png: plain });
  }
  expect(await preview('jpeg.tif')).toBeInstanceOf(Buffer);
});

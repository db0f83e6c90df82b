import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { inspectUpload, type Inspection } from '#shared/formats/inspectUpload';
import { bufferSource } from './byteSources';
import { readMontage } from './previewPng';
import {
  deflateStripTiff,
  deflateTileTiff,
  jpegTileTiff,
  lzwStripTiff,
  manyPagesTiff,
  packBitsStripTiff,
} from './craft/bombs';
import { jpegGray } from './craft/jpegGray';
import { lzwEncode, packBitsEncode } from './craft/lzwCodes';
import { measureCost } from './craft/memoryPeak';
import { tiffFile, type TiffPage } from './craft/tiffFile';
import { runPython } from './python';

const MiB = 2 ** 20;

function reasonOf(inspection: Inspection): string {
  if (inspection.ok) throw new Error(`expected a failure, got ok: ${JSON.stringify(inspection.metadata)}`);
  return inspection.reason;
}

/** A 64×64 strip or tile holds 4096 bytes at 8 bits: anything inflating past that is refused. */
describe('a TIFF block inflates to no more than its width, rows and sample size allow', () => {
  it.each([
    [
      'deflate strip',
      () => deflateStripTiff(256 * MiB, 32946),
      /strip of 64×64 pixels \(4096 bytes\): its deflate data inflates past the 4096 bytes/,
    ],
    [
      'Adobe deflate strip',
      () => deflateStripTiff(256 * MiB, 8),
      /strip of 64×64 pixels \(4096 bytes\): its deflate data inflates past/,
    ],
    [
      'deflate tile',
      () => deflateTileTiff(256 * MiB),
      /tile of 64×64 pixels \(4096 bytes\): its deflate data inflates past/,
    ],
    [
      'LZW strip',
      () => lzwStripTiff(64 * MiB),
      /strip of 64×64 pixels \(4096 bytes\): its LZW data inflates past/,
    ],
    [
      'PackBits strip',
      () => packBitsStripTiff(32 * MiB),
      /strip of 64×64 pixels \(4096 bytes\): its PackBits data inflates past/,
    ],
    [
      'JPEG tile declaring 8192×8192 pixels',
      () => jpegTileTiff(8192),
      /tile of 64×64 pixels \(4096 bytes\): its JPEG data declares 8192×8192 pixels/,
    ],
  ])('%s: fails with the reason, in bounded time and memory', async (_name, craft, reason) => {
    const bytes = craft();
    const cost = await measureCost(() => inspectUpload(bufferSource(bytes), 'bomb.tif'));
    expect(reasonOf(cost.result)).toMatch(reason);
    expect(cost.cpuSeconds).toBeLessThan(5);
    expect(cost.arrayBuffersMiB).toBeLessThan(32);
    expect(cost.rssMiB).toBeLessThan(64);
  });
});

describe('the bounded decoders read legitimate blocks as geotiff did', () => {
  const width = 96;
  const height = 64;
  const gradient = Buffer.from(Array.from({ length: width * height }, (_, index) => (index * 7) % 251));
  const rows = (from: number, to: number): Buffer => gradient.subarray(from * width, to * width);
  const page = (compression: number, encode: (rows: Buffer) => Buffer): TiffPage => ({
    width,
    height,
    compression,
    rowsPerStrip: 16,
    blocks: [0, 16, 32, 48].map((top) => encode(rows(top, top + 16))),
  });

  async function previewOf(bytes: Buffer): Promise<Buffer> {
    const result = await inspectUpload(bufferSource(bytes), 'legit.tif');
    if (!result.ok || !result.preview) throw new Error(result.ok ? 'no preview' : result.reason);
    return result.preview;
  }

  it('LZW, PackBits, deflate and Adobe deflate strips preview exactly as uncompressed ones', async () => {
    const plain = await previewOf(tiffFile([page(1, (data) => data)]));
    for (const [compression, encode] of [
      [5, lzwEncode],
      [32773, packBitsEncode],
      [8, deflateSync],
      [32946, deflateSync],
    ] as const) {
      expect({ compression, png: await previewOf(tiffFile([page(compression, encode)])) }).toEqual({
        compression,
        png: plain,
      });
    }
  });

  it('LZW across many table resets (a long, varied strip)', async () => {
    const noise = Buffer.from(Array.from({ length: 256 * 256 }, (_, index) => (index * 2654435761) >>> 24));
    const strip = (compression: number, encode: (data: Buffer) => Buffer): Buffer =>
      tiffFile([{ width: 256, height: 256, compression, blocks: [encode(noise)] }]);
    expect(await previewOf(strip(5, lzwEncode))).toEqual(await previewOf(strip(1, (data) => data)));
  });

  it('one strip declared as RowsPerStrip 2^32-1 ("all rows"), with the predictor, previews', async () => {
    const deltas = Buffer.alloc(96 * 64, 1); // horizontal differencing: each row decodes to 1, 2, 3, …
    const strip = (compression: number, predictor: number, block: Buffer): Buffer =>
      tiffFile([
        { width: 96, height: 64, compression, predictor, rowsPerStrip: 2 ** 32 - 1, blocks: [block] },
      ]);
    const ramp = Buffer.from(Array.from({ length: 96 * 64 }, (_, index) => (index % 96) + 1));
    expect(await previewOf(strip(8, 2, deflateSync(deltas)))).toEqual(await previewOf(strip(1, 1, ramp)));
  });

  it('a JPEG tile of its own size decodes (mid-gray)', async () => {
    const bytes = tiffFile([
      { width: 64, height: 64, compression: 7, tile: { width: 64, length: 64 }, blocks: [jpegGray(64, 64)] },
    ]);
    const png = readMontage(await previewOf(bytes), 64, 64);
    expect([png.width, png.height, png.factor]).toEqual([64, 64, 4]);
  });
});

describe('zstd strips: bounded by the sizes their frames declare', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tiff-zstd-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function zstd(source: ['--zeros', number] | ['--file', Buffer]): Promise<Buffer> {
    const out = join(dir, 'out.zst');
    if (source[0] === '--file') await writeFile(join(dir, 'in'), source[1]);
    await runPython('compressWith.py', [
      'zstd',
      out,
      source[0],
      source[0] === '--file' ? join(dir, 'in') : String(source[1]),
    ]);
    return readFile(out);
  }

  it('a zstd strip declaring 64 MiB in a 64×64 page fails before anything is decoded', async () => {
    const bytes = tiffFile([
      { width: 64, height: 64, compression: 50000, blocks: [await zstd(['--zeros', 64 * MiB])] },
    ]);
    const cost = await measureCost(() => inspectUpload(bufferSource(bytes), 'bomb.tif'));
    expect(reasonOf(cost.result)).toBe(
      'a TIFF strip of 64×64 pixels (4096 bytes): its zstd data declares 67108864 bytes',
    );
    expect(cost.rssMiB).toBeLessThan(64);
  });

  it('a legitimate zstd strip previews as the uncompressed one', async () => {
    const data = Buffer.from(Array.from({ length: 96 * 64 }, (_, index) => (index * 7) % 251));
    const page = (compression: number, block: Buffer): Buffer =>
      tiffFile([{ width: 96, height: 64, compression, blocks: [block] }]);
    const zstdPreview = await inspectUpload(bufferSource(page(50000, await zstd(['--file', data]))), 'z.tif');
    const plainPreview = await inspectUpload(bufferSource(page(1, data)), 'p.tif');
    expect(zstdPreview.ok && zstdPreview.preview).toEqual(plainPreview.ok && plainPreview.preview);
    expect(zstdPreview.ok && zstdPreview.preview).toBeInstanceOf(Buffer);
  });
});

describe('TIFF pages and bands within the inspection budget', () => {
  it('a valid TIFF of 60,000 pages is inspected (pages opened by offset, no stack overflow)', async () => {
    const bytes = manyPagesTiff(60_000);
    const cost = await measureCost(() => inspectUpload(bufferSource(bytes), 'pages.tif'));
    const result = cost.result;
    if (!result.ok) throw new Error(result.reason);
    expect(result.metadata).toMatchObject({ pages: 60_000, width: 1, height: 1 });
    expect(result.preview).not.toBeNull();
    expect(cost.cpuSeconds).toBeLessThan(15);
  });

  it('a page whose one strip is larger than a decoded buffer may be completes without a preview, saying why', async () => {
    const bytes = tiffFile([
      { width: 4096, height: 4096, compression: 1, blocks: [Buffer.alloc(4096 * 4096)] },
    ]);
    const result = await inspectUpload(bufferSource(bytes), 'big.tif', {
      limits: { maxDecodedBytes: 8 * MiB },
    });
    expect(result.ok && result.preview).toBeNull();
    expect(result.ok && result.metadata.preview_skipped).toBe(
      'one strip of the page (4096×4096 pixels, 33554432 bytes decoded) is larger than the 8 MiB an inspection may decode at once',
    );
  });

  it('strips that all point at the same bytes fail once reading passes the budget', async () => {
    // 400 one-row strips, each declared as the same 512 KiB of the file: 200 MiB read for 0.5 MiB.
    const shared = Buffer.alloc(512 * 1024, 80);
    const page = { width: 8192, height: 400, compression: 1, rowsPerStrip: 1, blocks: [shared] };
    const bytes = tiffFile([{ ...page, repeatFirstBlock: 400 }]);
    const cost = await measureCost(() => inspectUpload(bufferSource(bytes), 'echo.tif'));
    expect(reasonOf(cost.result)).toMatch(
      /^the file refers to the same bytes over and over: inspecting it would read more than \d+ bytes of a \d+-byte file$/,
    );
    expect(cost.cpuSeconds).toBeLessThan(5);
    expect(cost.rssMiB).toBeLessThan(150);
  });

  it('a band whose stored strips are larger than a buffer may be gets no preview, and why', async () => {
    const shared = Buffer.alloc(MiB, 80);
    const page = { width: 1024, height: 400, compression: 1, rowsPerStrip: 1, blocks: [shared] };
    const bytes = tiffFile([{ ...page, repeatFirstBlock: 400 }]);
    const result = await inspectUpload(bufferSource(bytes), 'echo.tif');
    expect(result.ok && result.metadata.preview_skipped).toBe(
      'a band of rows 0-399 stored in 419430400 bytes of strips is larger than the 256 MiB an inspection may decode at once',
    );
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspectUpload, type Inspection, type InspectionLimits } from '#shared/formats/inspectUpload';
import { bufferSource } from './byteSources';
import {
  manyEntriesZip,
  nestedZip,
  zarrGzipChunkBomb,
  zarrWithChunk,
  zarrZlibChunkBomb,
  zarrZstdChunkBomb,
  zip64AbsurdChunk,
} from './craft/bombs';
import { measureCost, type Cost } from './craft/memoryPeak';
import { deflatedZeros } from './craft/zeroStreams';
import { zipFile, type ZipInput } from './craft/zipFile';
import { runPython } from './python';

const MiB = 2 ** 20;

function reasonOf(inspection: Inspection): string {
  if (inspection.ok) throw new Error(`expected a failure, got ok: ${JSON.stringify(inspection.metadata)}`);
  return inspection.reason;
}

function skippedOf(inspection: Inspection): unknown {
  if (!inspection.ok) throw new Error(`expected ok, got: ${inspection.reason}`);
  expect(inspection.preview).toBeNull();
  return inspection.metadata.preview_skipped;
}

function inspect(bytes: Buffer, limits?: Partial<InspectionLimits>): Promise<Cost<Inspection>> {
  return measureCost(() => inspectUpload(bufferSource(bytes), 'bomb.zarr', limits ? { limits } : {}));
}

function expectCheap(cost: Cost<Inspection>): void {
  expect(cost.cpuSeconds).toBeLessThan(3);
  expect(cost.arrayBuffersMiB).toBeLessThan(32);
  expect(cost.rssMiB).toBeLessThan(64);
}

describe('Zarr chunks are bounded by the budget before they are read', () => {
  it.each([
    ['zlib', zarrZlibChunkBomb],
    ['gzip', zarrGzipChunkBomb],
  ])('a %s chunk of a [1024,1024,1024] chunk grid: no preview, and why', async (_codec, craft) => {
    const cost = await inspect(craft(1024, 256 * MiB));
    expect(skippedOf(cost.result)).toBe(
      'a Zarr chunk of 1073741824 bytes (chunks [1024,1024,1024] of |u1) is larger than the 256 MiB an inspection may decode at once',
    );
    expect(cost.result.ok && cost.result.metadata).toMatchObject({
      shape: [2, 2, 2],
      chunks: [1024, 1024, 1024],
    });
    expectCheap(cost);
  });

  it('a Blosc chunk of 64 MiB against a budget of 32 MiB at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'blosc-bomb-'));
    try {
      await runPython('compressWith.py', ['blosc', join(dir, 'chunk'), '--zeros', String(64 * MiB)]);
      const frame = await readFile(join(dir, 'chunk'));
      const bytes = zarrWithChunk(
        [2, 2, 2],
        [64, 1024, 1024],
        { id: 'blosc', cname: 'zstd', clevel: 9, shuffle: 1 },
        frame,
      );
      const cost = await inspect(bytes, { maxDecodedBytes: 32 * MiB });
      expect(skippedOf(cost.result)).toBe(
        'a Zarr chunk of 67108864 bytes (chunks [64,1024,1024] of |u1) is larger than the 32 MiB an inspection may decode at once',
      );
      expectCheap(cost);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a zstd chunk declaring 1 GiB is never decoded (no zstd in previews), metadata still read', async () => {
    const cost = await inspect(zarrZstdChunkBomb(1024, 2 ** 30));
    expect(cost.result.ok && cost.result.metadata.compressor).toEqual({ id: 'zstd', level: 3 });
    expect(cost.result.ok && cost.result.preview).toBeNull();
    expectCheap(cost);
  });

  it('a chunk that inflates past its declared size fails, having inflated no more than that size', async () => {
    const bytes = zarrWithChunk(
      [64, 64, 64],
      [64, 64, 64],
      { id: 'zlib', level: 9 },
      deflatedZeros(256 * MiB, 'zlib'),
    );
    const cost = await inspect(bytes);
    expect(reasonOf(cost.result)).toMatch(/^corrupt Zarr chunk 0\.0\.0: /);
    expectCheap(cost);
  });

  it('chunks that together inflate past what an inspection may decompress: no preview, and why', async () => {
    const chunk = deflatedZeros(MiB, 'zlib');
    const zarray = {
      zarr_format: 2,
      shape: [64, 128, 256],
      chunks: [64, 64, 256],
      dtype: '|u1',
      compressor: { id: 'zlib', level: 9 },
    };
    const bytes = zipFile([
      {
        name: '.zarray',
        data: Buffer.from(JSON.stringify({ ...zarray, fill_value: 0, order: 'C', filters: null })),
      },
      { name: '0.0.0', data: chunk },
      { name: '0.1.0', data: chunk },
    ]);
    const cost = await inspect(bytes, { maxDecompressedBytes: 2 * MiB });
    expect(skippedOf(cost.result)).toMatch(
      /^the 2 Zarr chunks of the preview would inflate \d+ bytes, more than the 2 MiB an inspection may decompress in all$/,
    );
  });
});

describe('what all of an inspection inflates is counted as it happens', () => {
  it('metadata documents that together inflate past the budget fail, saying so', async () => {
    const pad = randomBytes(768 * 1024).toString('base64'); // 1 MiB of JSON that deflate barely shrinks
    const group = (index: number): ZipInput => ({
      name: `g${index}/zarr.json`,
      data: Buffer.from(JSON.stringify({ zarr_format: 3, node_type: 'group', attributes: { pad } })),
      deflate: true,
    });
    const root = { name: 'zarr.json', data: Buffer.from('{"zarr_format": 3, "node_type": "group"}') };
    const bytes = zipFile([root, ...Array.from({ length: 10 }, (_, index) => group(index))]);
    const cost = await inspect(bytes, { maxDecompressedBytes: 4 * MiB });
    expect(reasonOf(cost.result)).toBe(
      'decompression bomb: the file inflates past the 4 MiB an inspection may decompress in all',
    );
  });
});

describe('zip archives: entry counts, nesting and 64-bit sizes', () => {
  it('65,000 empty entries beside a Zarr group are listed in well under a few seconds', async () => {
    const bytes = manyEntriesZip(65_000);
    const cost = await measureCost(() => inspectUpload(bufferSource(bytes), 'many.zarr'));
    expect(cost.result.ok && cost.result.metadata).toMatchObject({ format: 'zarr', node_type: 'group' });
    expect(cost.cpuSeconds).toBeLessThan(5);
  });

  it('a zip nested 30 deep is not opened past the first level', async () => {
    const cost = await inspect(nestedZip(30));
    expect(reasonOf(cost.result)).toBe(
      'not a Zarr store: the zip has no zarr.json, .zgroup or .zarray (archives inside it are not opened)',
    );
    expectCheap(cost);
  });

  it('zip64 sizes of 2^62 bytes: refused from the central directory', async () => {
    expect(reasonOf((await inspect(zip64AbsurdChunk(false))).result)).toBe(
      'corrupt zip archive: its central directory is invalid (compressed/uncompressed size mismatch for stored file: 16 != 4611686018427388000)',
    );
    expect(reasonOf((await inspect(zip64AbsurdChunk(true))).result)).toMatch(
      /^zip bomb: the archive declares 4611686018427388000 bytes uncompressed in \d+ bytes$/,
    );
  });
});

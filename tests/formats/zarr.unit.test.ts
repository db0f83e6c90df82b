import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileByteSource } from '#shared/formats/fileByteSource';
import { inspectUpload, readMetadata, type Inspection } from '#shared/formats/inspectUpload';
import { bufferSource, failingSource } from './byteSources';
import { type Montage, readMontage } from './previewPng';
import { runPython } from './python';

let dir: string;
let expected: Record<string, Record<string, unknown>>;
const fixture = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zarr-test-'));
  expected = JSON.parse(await runPython('writeZarrFixtures.py', [dir]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function inspectFixture(name: string, limits?: { maxZipEntries: number }): Promise<Inspection> {
  return inspectUpload(await fileByteSource(fixture(name)), name, limits ? { limits } : {});
}

function reasonOf(inspection: Inspection): string {
  if (inspection.ok) throw new Error('expected a failure, got ok');
  return inspection.reason;
}

const gray = (png: Montage, x: number, y: number): number => png.gray(x, y);

describe('Zarr metadata matches what wrote the store', () => {
  it.each(['v2_ome.zarr', 'v2_blosc.zarr', 'v3_ome.zarr'])('%s', async (name) => {
    const result = await readMetadata(await fileByteSource(fixture(name)), name);
    if (!result.ok) throw new Error(result.reason);
    expect(result.metadata).toMatchObject({ format: 'zarr', ...expected[name] });
    expect(result.preview).toBeNull();
  });
});

describe('Zarr previews: middle slices of the coarsest level', () => {
  it('v2 OME-NGFF: level 1 (8×20×24, scale 4,1,1), the cube bright in each view', async () => {
    const result = await inspectFixture('v2_ome.zarr');
    if (!result.ok || !result.preview) throw new Error('expected a preview');
    const png = readMontage(result.preview, 24 + 4 + 24 + 4 + 20, 32);
    // axial 24×20, coronal 24×(8·4), sagittal 20×(8·4), 4 px apart, bottom-aligned.
    expect([png.width, png.height]).toEqual([24 + 4 + 24 + 4 + 20, 32]);
    expect(gray(png, 12, 12 + 10)).toBeGreaterThan(200);
    expect(gray(png, 28 + 12, 17)).toBeGreaterThan(200);
    expect(gray(png, 56 + 10, 17)).toBeGreaterThan(200);
    expect(gray(png, 1, 13)).toBeLessThan(30);
  });

  it('v3 (bytes + gzip codecs): level 0 (16×40×48, scale 2,0.5,0.5)', async () => {
    const result = await inspectFixture('v3_ome.zarr');
    if (!result.ok || !result.preview) throw new Error('expected a preview');
    const png = readMontage(result.preview, 48 + 4 + 48 + 4 + 40, 64);
    expect([png.width, png.height]).toEqual([48 + 4 + 48 + 4 + 40, 64]);
    expect(gray(png, 24, 24 + 20)).toBeGreaterThan(200);
    expect(gray(png, 52 + 24, 32 + 2)).toBeGreaterThan(200);
    expect(gray(png, 1, 25)).toBeLessThan(30);
  });

  it('v2 Blosc (the default compressor of zarr-python): a 2-D ramp, dark at the top left, bright at the bottom right', async () => {
    const result = await inspectFixture('v2_blosc.zarr');
    if (!result.ok || !result.preview) throw new Error('expected a preview');
    const png = readMontage(result.preview, 40, 30);
    expect([png.width, png.height]).toEqual([40, 30]);
    expect(gray(png, 0, 0)).toBeLessThan(10);
    expect(gray(png, 39, 29)).toBeGreaterThan(245);
    expect(gray(png, 39, 0)).toBeLessThan(gray(png, 0, 29));
  });

  it('no preview for a codec it does not decode (LZMA), metadata still read', async () => {
    const result = await inspectFixture('v2_lzma.zarr');
    expect(result.ok && result.metadata.compressor).toEqual({
      id: 'lzma',
      format: 1,
      check: -1,
      preset: null,
      filters: null,
    });
    expect(result.ok && result.preview).toBeNull();
  });
});

describe('bad Zarr uploads fail with a reason', () => {
  it('a zip bomb: huge declared size against the archive', async () => {
    expect(reasonOf(await inspectFixture('ratio.zarr'))).toMatch(
      /^zip bomb: the archive declares \d+ bytes uncompressed/,
    );
  });

  it('a zip bomb: one metadata entry with a huge compression ratio', async () => {
    expect(reasonOf(await inspectFixture('jsonbomb.zarr'))).toMatch(
      /^zip bomb: \.zgroup declares a compression ratio/,
    );
  });

  it('too many entries, refused from the central directory', async () => {
    expect(reasonOf(await inspectFixture('many.zarr', { maxZipEntries: 1000 }))).toMatch(
      /^zip bomb: the archive declares 3001 entries, more than the limit of 1000$/,
    );
  });

  it('a nested archive is not opened', async () => {
    expect(reasonOf(await inspectFixture('nested.zarr'))).toMatch(
      /not a Zarr store.*archives inside it are not opened/,
    );
  });

  it('not a zip (NIfTI bytes named .zarr), truncated, empty', async () => {
    const nifti = await readFile('/usr/lib/python3/dist-packages/nibabel/tests/data/anatomical.nii');
    expect(reasonOf(await inspectUpload(bufferSource(nifti), 'a.zarr'))).toMatch(
      /^not a zip archive \(a \.zarr upload is a zip of a Zarr store\): .*; the bytes look like a NIfTI file$/,
    );
    const zip = await readFile(fixture('v2_ome.zarr'));
    expect(reasonOf(await inspectUpload(bufferSource(zip.subarray(0, zip.length - 200)), 'a.zarr'))).toMatch(
      /^truncated or corrupt zip archive: /,
    );
    expect(reasonOf(await inspectUpload(bufferSource(Buffer.alloc(0)), 'a.zarr'))).toMatch(/empty/);
  });

  it('a corrupt chunk', async () => {
    const zip = Buffer.from(await readFile(fixture('v3_ome.zarr')));
    const at = zip.indexOf(Buffer.from('0/c/1/1/1')); // stored entries: the data follows the local header
    zip.fill(0x55, at + 9 + 12, at + 9 + 40);
    const result = await inspectUpload(bufferSource(zip), 'a.zarr');
    expect(reasonOf(result)).toMatch(/^corrupt Zarr chunk 0\/c\/1\/1\/1: /);
  });

  it('rejects (not fails) when the source breaks', async () => {
    const fault = new Error('EIO');
    await expect(inspectUpload(failingSource(5000, 0, fault), 'a.zarr')).rejects.toBe(fault);
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { fileByteSource } from '#shared/formats/fileByteSource';
import { inspectUpload, readMetadata, type Inspection } from '#shared/formats/inspectUpload';
import { bufferSource, failingSource } from './byteSources';
import { type Montage, readMontage } from './previewPng';
import { pythonJson, runPython } from './python';

const files = [
  'gray8.tif',
  'stack16.tif',
  'big.tif',
  'rgb.tif',
  'bigendian.tif',
  'volume.ome.tif',
  'wide.tif',
];
let dir: string;
const fixture = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tiff-test-'));
  await runPython('writeTiffFixtures.py', [dir]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function reasonOf(inspection: Inspection): string {
  if (inspection.ok) throw new Error('expected a failure, got ok');
  return inspection.reason;
}

async function previewBytes(name: string): Promise<Buffer> {
  const result = await inspectUpload(await fileByteSource(fixture(name)), name);
  if (!result.ok) throw new Error(result.reason);
  if (!result.preview) throw new Error('expected a preview');
  return result.preview;
}

/** The preview of a page of width × height pixels (scaled up as previewUpscale says). */
const previewOf = async (name: string, width: number, height: number): Promise<Montage> =>
  readMontage(await previewBytes(name), width, height);

const gray = (png: Montage, x: number, y: number): number => png.gray(x, y);

describe('TIFF metadata matches tifffile', () => {
  it('for classic, BigTIFF (tiled), multi-page, RGB, big-endian and OME-TIFF files', async () => {
    const paths = files.map(fixture);
    const expected = await pythonJson<Record<string, Record<string, unknown>>>('tiffReport.py', paths);
    for (const path of paths) {
      const result = await readMetadata(await fileByteSource(path), path);
      if (!result.ok) throw new Error(`${path}: ${result.reason}`);
      expect({ path, ...result.metadata }).toMatchObject({ path, format: 'tiff', ...expected[path] });
    }
  });

  it('reads OME-XML physical sizes and units', async () => {
    const result = await readMetadata(await fileByteSource(fixture('volume.ome.tif')), 'volume.ome.tif');
    expect(result.ok && result.metadata).toMatchObject({
      pages: 5,
      ome_xml: true,
      ome: { size: { z: 5 }, physical_size: { x: 0.5, y: 0.5, z: 2, x_unit: 'µm', z_unit: 'µm' } },
    });
  });
});

describe('TIFF previews', () => {
  it('show the middle page (the only one with a bright square)', async () => {
    const png = await previewOf('stack16.tif', 64, 48);
    expect([png.width, png.height, png.factor]).toEqual([64, 48, 6]);
    expect(gray(png, 32, 24)).toBeGreaterThan(200);
    expect(gray(png, 3, 3)).toBeLessThan(30);
  });

  it('show RGB as luminance and OME volumes at their middle plane', async () => {
    const rgb = await previewOf('rgb.tif', 80, 60);
    expect(gray(rgb, 40, 30)).toBeGreaterThan(200);
    expect(gray(rgb, 2, 2)).toBeLessThan(30);
    const ome = await previewOf('volume.ome.tif', 48, 64);
    expect([ome.width, ome.height]).toEqual([48, 64]);
    expect(gray(ome, 24, 32)).toBeGreaterThan(200);
  });

  it('stay within 1024 pixels', async () => {
    const png = PNG.sync.read(await previewBytes('wide.tif'));
    expect(png.width).toBeLessThanOrEqual(1024);
    expect(png.height).toBeGreaterThanOrEqual(30);
  });
});

describe('bad TIFF content fails with a reason', () => {
  it('NIfTI bytes named .tif', async () => {
    const nifti = await readFile('/usr/lib/python3/dist-packages/nibabel/tests/data/anatomical.nii');
    expect(reasonOf(await inspectUpload(bufferSource(nifti), 'scan.tif'))).toBe(
      'not a TIFF file: no TIFF byte-order mark and magic number; the bytes look like a NIfTI file',
    );
  });

  it('a truncated file', async () => {
    const bytes = await readFile(fixture('stack16.tif'));
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6));
    expect(reasonOf(await inspectUpload(bufferSource(cut), 'a.tif'))).toMatch(/^truncated TIFF file/);
    const headerOnly = bytes.subarray(0, 12);
    expect(reasonOf(await inspectUpload(bufferSource(headerOnly), 'a.tif'))).toMatch(/^truncated TIFF file/);
  });

  it('a page chain that loops', async () => {
    const bytes = Buffer.from(await readFile(fixture('gray8.tif')));
    const ifd = bytes.readUInt32LE(4);
    const entries = bytes.readUInt16LE(ifd);
    bytes.writeUInt32LE(ifd, ifd + 2 + entries * 12); // next IFD: itself
    expect(reasonOf(await inspectUpload(bufferSource(bytes), 'a.tiff'))).toMatch(/page chain loops/);
  });

  it('an empty file and garbage', async () => {
    expect(reasonOf(await inspectUpload(bufferSource(Buffer.alloc(0)), 'a.tif'))).toMatch(/empty/);
    const garbage = Buffer.concat([Buffer.from('II*\0', 'latin1'), Buffer.alloc(200, 0xff)]);
    expect(reasonOf(await inspectUpload(bufferSource(garbage), 'a.tif'))).toMatch(/TIFF/);
  });

  it('rejects (not fails) when the source breaks', async () => {
    const fault = new Error('socket hang up');
    await expect(inspectUpload(failingSource(5000, 0, fault), 'a.tif')).rejects.toBe(fault);
  });
});

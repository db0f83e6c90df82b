import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { PNG } from 'pngjs';
import { fileByteSource } from '#shared/formats/fileByteSource';
import { inspectUpload, readMetadata, type Inspection } from '#shared/formats/inspectUpload';
import { bufferSource, failingSource, unreachableSource } from './byteSources';
import { readMontage } from './previewPng';
import { pythonJson, runPython } from './python';

const nibabelData = '/usr/lib/python3/dist-packages/nibabel/tests/data';
const realFiles = [
  'anatomical.nii', // big-endian NIfTI-1, SPM
  'functional.nii', // 4-D, scl_slope/inter set
  'reoriented_anat_moved.nii', // big-endian float32
  'example4d.nii.gz', // gzipped, FSL
  'example_nifti2.nii.gz', // NIfTI-2, gzipped
  'standard.nii.gz', // qform 0, sform 2
  'row_major.dconn.nii', // NIfTI-2 CIFTI, 6-D, intent 3001
].map((name) => join(nibabelData, name));

let dir: string;
let fixtures: (name: string) => string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nifti-test-'));
  fixtures = (name) => join(dir, name);
  await runPython('writeNiftiFixtures.py', [dir]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function inspectFile(path: string, name = path): Promise<Inspection> {
  return inspectUpload(await fileByteSource(path), name);
}

function metadataOf(inspection: Inspection): Record<string, unknown> {
  if (!inspection.ok) throw new Error(`expected ok, got: ${inspection.reason}`);
  return inspection.metadata;
}

function reasonOf(inspection: Inspection): string {
  if (inspection.ok) throw new Error('expected a failure, got ok');
  return inspection.reason;
}

describe('NIfTI metadata matches nibabel', () => {
  it('for nibabel test images and volumes nibabel wrote (NIfTI-1/2, both byte orders each, gzipped)', async () => {
    const written = ['cube_le.nii.gz', 'cube_be.nii', 'cube_n2.nii', 'cube_n2_be.nii.gz'].map((name) =>
      fixtures(name),
    );
    const files = [...realFiles, ...written];
    const expected = await pythonJson<Record<string, Record<string, unknown>>>('nibabelReport.py', files);
    for (const file of files) {
      const metadata = metadataOf(await readMetadata(await fileByteSource(file), file));
      const want = expected[file]!;
      const { affine: wantAffine, ...rest } = want;
      expect({ file, affine: roundAll(metadata.affine) }).toEqual({ file, affine: roundAll(wantAffine) });
      expect({ file, ...(roundAll(metadata) as object) }).toMatchObject({
        file,
        format: 'nifti',
        ...(roundAll(rest) as object),
      });
    }
  });

  it('names units, transforms and intent, and says which transform the affine is', async () => {
    const metadata = metadataOf(
      await readMetadata(await fileByteSource(fixtures('cube_le.nii.gz')), 'cube.nii.gz'),
    );
    expect(metadata).toMatchObject({
      compression: 'gzip',
      units: { spatial: 'micron', temporal: 'msec' },
      qform_name: 'scanner',
      sform_name: 'mni',
      affine_source: 'sform',
      intent: { code: 3, label: 't test', name: 'tmap', params: [12, 0, 0] },
      description: 'catalogue test volume',
    });
    const bigEndian = metadataOf(
      await readMetadata(await fileByteSource(fixtures('cube_be.nii')), 'cube.nii'),
    );
    expect(bigEndian).toMatchObject({ byte_order: 'big', affine_source: 'qform', datatype: 'float32' });
  });

  it('reads metadata alone without a preview', async () => {
    const result = await readMetadata(await fileByteSource(fixtures('cube_le.nii.gz')), 'cube.nii.gz');
    expect(result.ok && result.preview).toBeNull();
  });
});

describe('NIfTI previews', () => {
  it.each(['cube_le.nii.gz', 'cube_be.nii', 'cube_n2.nii', 'cube_n2_be.nii.gz'])(
    '%s: three middle slices side by side, the cube bright in the middle of each, z stretched by its voxel size',
    async (name) => {
      const result = await inspectFile(fixtures(name));
      if (!result.ok || !result.preview) throw new Error('expected a preview');
      // axial 40×30, coronal 40×(20·2), sagittal 30×(20·2), 4 px apart, bottom-aligned, then scaled
      // up ×7 (nearest neighbour) so the short side is at least 256 px.
      const montage = readMontage(result.preview, 40 + 4 + 40 + 4 + 30, 40);
      expect([montage.factor, PNG.sync.read(result.preview).height]).toEqual([7, 280]);
      const gray = montage.gray;
      expect(gray(20, 10 + 15)).toBeGreaterThan(200); // axial centre
      expect(gray(44 + 20, 20)).toBeGreaterThan(200); // coronal centre
      expect(gray(88 + 15, 20)).toBeGreaterThan(200); // sagittal centre
      expect(gray(2, 12)).toBeLessThan(30); // axial corner: background
      expect(gray(44 + 2, 2)).toBeLessThan(30);
      expect(gray(88 + 2, 38)).toBeLessThan(30);
    },
  );

  it('keeps a preview within 1024 pixels', async () => {
    const result = await inspectFile(fixtures('wide.nii'));
    if (!result.ok || !result.preview) throw new Error('expected a preview');
    const png = PNG.sync.read(result.preview);
    expect(png.width).toBeLessThanOrEqual(1024);
    expect(png.height).toBeGreaterThanOrEqual(1);
  });

  it('shows the first volume of a real 4-D scan', async () => {
    const result = await inspectFile(join(nibabelData, 'example4d.nii.gz'));
    if (!result.ok || !result.preview) throw new Error('expected a preview');
    const png = PNG.sync.read(result.preview);
    expect(png.width).toBeGreaterThan(128);
    expect(png.data.some((value, index) => index % 4 === 0 && value > 200)).toBe(true);
  });
});

describe('bad NIfTI content fails with a reason', () => {
  it('TIFF bytes named .nii', async () => {
    const tiff = Buffer.concat([Buffer.from('II*\0\x08\0\0\0', 'latin1'), Buffer.alloc(600)]);
    expect(reasonOf(await inspectUpload(bufferSource(tiff), 'scan.nii'))).toMatch(
      /^not a NIfTI file: bad sizeof_hdr \d+; the bytes look like a TIFF file$/,
    );
  });

  it('an empty file', async () => {
    expect(reasonOf(await inspectUpload(bufferSource(Buffer.alloc(0)), 'scan.nii.gz'))).toMatch(/empty/);
  });

  it('random bytes, gzipped or not', async () => {
    const noise = Buffer.from(Array.from({ length: 2000 }, (_, index) => (index * 7919) % 251));
    expect(reasonOf(await inspectUpload(bufferSource(noise), 'a.nii'))).toMatch(
      /^not a NIfTI file: bad sizeof_hdr/,
    );
    expect(reasonOf(await inspectUpload(bufferSource(gzipSync(noise)), 'a.nii.gz'))).toMatch(
      /^not a NIfTI file: bad sizeof_hdr/,
    );
  });

  it('a truncated file: plain (header declares more) and gzipped (the stream ends early)', async () => {
    const plain = await readFile(fixtures('cube_be.nii'));
    expect(reasonOf(await inspectUpload(bufferSource(plain.subarray(0, 20_000)), 'a.nii'))).toMatch(
      /^truncated NIfTI file: 20000 bytes, its header declares 96352$/,
    );
    const whole = gzipSync(await readFile(fixtures('cube_n2.nii')));
    const cut = whole.subarray(0, Math.floor(whole.length / 2));
    expect(reasonOf(await inspectUpload(bufferSource(cut), 'a.nii.gz'))).toMatch(/truncated|corrupt/);
    expect(reasonOf(await inspectUpload(bufferSource(whole.subarray(0, 30)), 'a.nii.gz'))).toMatch(
      /truncated|corrupt|only/,
    );
  });

  it('corrupt gzip data after a good header', async () => {
    const whole = gzipSync(await readFile(fixtures('cube_n2.nii')), { level: 0 });
    const corrupt = Buffer.from(whole);
    corrupt.fill(0xa5, 2000, 3000);
    expect(reasonOf(await inspectUpload(bufferSource(corrupt), 'a.nii.gz'))).toMatch(/corrupt/);
  });

  it('a gzip bomb: a volume that inflates at the maximum deflate ratio', async () => {
    const header = Buffer.from((await readFile(fixtures('cube_be.nii'))).subarray(0, 352));
    [3, 1024, 1024, 128].forEach((size, index) => header.writeInt16BE(size, 40 + index * 2));
    header.writeInt16BE(2, 70); // uint8: a 128 MiB first volume
    header.writeInt16BE(8, 72);
    const zeros = gzipSync(Buffer.alloc(16 * 2 ** 20), { level: 9 }); // one member: 16 MiB of zeros
    const bomb = Buffer.concat([gzipSync(header), ...Array.from({ length: 8 }, () => zeros)]);
    expect(reasonOf(await inspectUpload(bufferSource(bomb), 'bomb.nii.gz'))).toMatch(/^gzip bomb: /);
  });

  it('an unsupported datatype', async () => {
    const bytes = Buffer.from(await readFile(fixtures('cube_n2.nii')));
    bytes.writeInt16LE(9999, 12); // NIfTI-2 datatype
    expect(reasonOf(await inspectUpload(bufferSource(bytes), 'a.nii'))).toBe(
      'unsupported NIfTI datatype code 9999',
    );
  });

  it('a .hdr of a pair, and an Analyze header, named .nii', async () => {
    const hdr = await readFile(join(nibabelData, 'nifti1.hdr'));
    expect(reasonOf(await inspectUpload(bufferSource(hdr), 'a.nii'))).toMatch(/\.hdr\/\.img pair/);
    const analyze = await readFile(join(nibabelData, 'analyze.hdr'));
    expect(reasonOf(await inspectUpload(bufferSource(analyze), 'a.nii'))).toMatch(/no NIfTI-1 magic/);
  });

  it('an unsupported extension', async () => {
    expect(reasonOf(await inspectUpload(bufferSource(Buffer.from('x')), 'notes.txt'))).toMatch(
      /unsupported file type/,
    );
  });
});

describe('faults of the source are not content failures', () => {
  it('rejects with the error a source stream raised', async () => {
    const fault = new Error('disk on fire');
    await expect(inspectUpload(failingSource(10_000, 0, fault), 'a.nii')).rejects.toBe(fault);
    const late = new Error('connection reset');
    const plain = await readFile(fixtures('cube_be.nii'));
    await expect(inspectUpload(failingSource(plain.length, 0, late), 'a.nii.gz')).rejects.toBe(late);
  });

  it('rejects with the error open() raised', async () => {
    const fault = new Error('no such object');
    await expect(inspectUpload(unreachableSource(100, fault), 'a.nii')).rejects.toBe(fault);
  });

  it('rejects when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    await expect(
      inspectUpload(await fileByteSource(fixtures('cube_le.nii.gz')), 'a.nii.gz', {
        signal: controller.signal,
      }),
    ).rejects.toThrow('shutting down');
  });
});

describe('abort during a preview', () => {
  it('rejects promptly while the volume is still streaming', async () => {
    const header = Buffer.from((await readFile(fixtures('cube_be.nii'))).subarray(0, 352));
    [3, 2048, 2048, 64].forEach((size, index) => header.writeInt16BE(size, 40 + index * 2));
    header.writeInt16BE(2, 70); // uint8
    header.writeInt16BE(8, 72);
    const controller = new AbortController();
    let chunks = 0;
    const endless = {
      size: 352 + 2048 * 2048 * 64,
      open: (range?: { start: number; end?: number }) =>
        Promise.resolve(
          new Readable({
            read() {
              if ((range?.start ?? 0) === 0 && chunks === 0) this.push(header);
              chunks++;
              if (chunks === 20) controller.abort(new Error('processor shutting down'));
              setImmediate(() => this.push(Buffer.alloc(64 * 1024)));
            },
          }),
        ),
    };
    await expect(inspectUpload(endless, 'big.nii', { signal: controller.signal })).rejects.toThrow(
      'processor shutting down',
    );
    expect(chunks).toBeLessThan(1000);
  });
});

describe('a header-only read of a large gzipped volume', () => {
  it('stops after the header', async () => {
    const big = join(dir, 'big.nii.gz');
    const header = (await readFile(fixtures('cube_n2.nii'))).subarray(0, 544);
    await writeFile(big, gzipSync(Buffer.concat([header, randomBytes(16 * 2 ** 20)])));
    let delivered = 0;
    const source = await fileByteSource(big);
    const counting = {
      size: source.size,
      open: async (range?: { start: number; end?: number }) => {
        const stream = await source.open(range);
        stream.on('data', (chunk: Buffer) => (delivered += chunk.length));
        return stream;
      },
    };
    expect((await readMetadata(counting, 'big.nii.gz')).ok).toBe(true);
    expect(source.size).toBeGreaterThan(16 * 2 ** 20);
    expect(delivered).toBeLessThan(2 ** 20);
  });
});

/** Rounds floats (float32 round trips) so metadata compares with nibabel's doubles. */
function roundAll(value: unknown): unknown {
  if (typeof value === 'number') return Number(value.toPrecision(6));
  if (Array.isArray(value)) return value.map(roundAll);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, roundAll(entry)]));
  }
  return value;
}

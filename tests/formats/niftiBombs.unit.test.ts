import { inspectUpload, type Inspection } from '#shared/formats/inspectUpload';
import { bufferSource } from './byteSources';
import { niftiGz, niftiGzipBomb } from './craft/bombs';
import { measureCost } from './craft/memoryPeak';
import { deflatedZeros } from './craft/zeroStreams';

const MiB = 2 ** 20;

function reasonOf(inspection: Inspection): string {
  if (inspection.ok) throw new Error(`expected a failure, got ok: ${JSON.stringify(inspection.metadata)}`);
  return inspection.reason;
}

describe('gzipped NIfTI previews within the inspection budget', () => {
  it('a 1 MB gzip bomb (a 1024³ volume of zeros) fails after inflating at most 64 MiB and a chunk', async () => {
    const bytes = niftiGzipBomb(1024);
    const cost = await measureCost(() => inspectUpload(bufferSource(bytes), 'bomb.nii.gz'));
    const match = /^gzip bomb: (\d+) bytes inflate to more than (\d+)$/.exec(reasonOf(cost.result));
    expect(Number(match?.[2])).toBeGreaterThan(64 * MiB);
    expect(Number(match?.[2])).toBeLessThan(65 * MiB);
    expect(cost.cpuSeconds).toBeLessThan(5);
    expect(cost.rssMiB).toBeLessThan(64);
  });

  it('a first volume larger than an inspection may decompress: metadata, no preview, and why', async () => {
    const bytes = niftiGz([512, 512, 512], 'uint8', [deflatedZeros(512 ** 3, 'gzip')]);
    const cost = await measureCost(() =>
      inspectUpload(bufferSource(bytes), 'big.nii.gz', { limits: { maxDecompressedBytes: 64 * MiB } }),
    );
    const result = cost.result;
    if (!result.ok) throw new Error(result.reason);
    expect(result.metadata).toMatchObject({ shape: [512, 512, 512], compression: 'gzip' });
    expect(result.preview).toBeNull();
    expect(result.metadata.preview_skipped).toBe(
      'the first volume (512×512×512 of uint8) would inflate 134218080 bytes, more than the 64 MiB an inspection may decompress in all',
    );
    expect(cost.cpuSeconds).toBeLessThan(3);
  });

  it('a row longer than a decoded buffer may be: no preview, and why', async () => {
    const bytes = niftiGz([32_000, 2, 2], 'int16', [deflatedZeros(32_000 * 2 * 2 * 2, 'gzip')]);
    const limits = { maxDecodedBytes: 32 * 1024 };
    const result = await inspectUpload(bufferSource(bytes), 'long.nii.gz', { limits });
    expect(result.ok && result.metadata.preview_skipped).toBe(
      'a row of the first volume (32000×2×2 of int16) is larger than the 32768 bytes an inspection may decode at once',
    );
  });
});

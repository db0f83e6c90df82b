import { randomFillSync } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { fileByteSource } from '#shared/formats/fileByteSource';
import { readMetadata } from '#shared/formats/inspectUpload';
import type { Cleanup } from './cleanup';
import { milliseconds, type Figure } from './figure';
import { printDetail, printFigure, printSection } from './report';

/** 1024 × 1024 × 512 int16 voxels: 1 GiB of noise, which gzip cannot shrink below 1 GiB. */
const shape = [1024, 1024, 512] as const;
const voxelBytes = 2;

/**
 * Metadata extraction time of a ≥ 1 GiB gzipped NIfTI (target ≤ 1 s: the header only, never the
 * volume). The file is generated streaming into a temporary folder, removed at the end.
 */
export async function measureNiftiMetadata(cleanup: Cleanup, options: { rounds: number }): Promise<Figure[]> {
  printSection('upload formats: NIfTI metadata of a gzipped volume ≥ 1 GiB');
  const dir = await mkdtemp(join(tmpdir(), 'format-bench-'));
  const remove = cleanup.defer('format bench folder', () => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'noise.nii.gz');
  const started = Date.now();
  await pipeline(niftiNoise(), createGzip({ level: 1 }), createWriteStream(path));
  const { size } = await stat(path);
  printDetail(
    `generated ${(size / 2 ** 30).toFixed(2)} GiB .nii.gz in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  if (size < 2 ** 30) throw new Error(`the generated file is ${size} bytes, under 1 GiB`);
  const rounds: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const begin = performance.now();
    const result = await readMetadata(await fileByteSource(path), 'noise.nii.gz');
    rounds.push(performance.now() - begin);
    if (!result.ok) throw new Error(`metadata failed: ${result.reason}`);
  }
  await remove();
  const figure: Figure = {
    name: 'NIfTI metadata, 1 GiB .nii.gz',
    rounds,
    unit: milliseconds,
    target: { kind: 'at most', value: 1000 },
  };
  printFigure(figure);
  return [figure];
}

/** A NIfTI-1 file, streamed: a 352-byte header, then random int16 voxels, 4 MiB at a time. */
function niftiNoise(): Readable {
  const total = shape.reduce((product, size) => product * size, voxelBytes);
  const block = Buffer.alloc(4 * 2 ** 20);
  let sent = 0;
  return Readable.from(
    (function* () {
      yield niftiHeader();
      while (sent < total) {
        const length = Math.min(block.length, total - sent);
        randomFillSync(block, 0, length);
        sent += length;
        yield Buffer.from(block.subarray(0, length));
      }
    })(),
  );
}

function niftiHeader(): Buffer {
  const header = Buffer.alloc(352);
  header.writeInt32LE(348, 0);
  [3, ...shape, 1, 1, 1, 1].forEach((size, index) => header.writeInt16LE(size, 40 + index * 2));
  header.writeInt16LE(4, 70); // datatype int16
  header.writeInt16LE(16, 72); // bitpix
  [1, 1, 1, 1].forEach((size, index) => header.writeFloatLE(size, 76 + index * 4));
  header.writeFloatLE(352, 108); // vox_offset
  header.writeFloatLE(1, 112); // scl_slope
  header.writeUInt8(2, 123); // xyzt_units: mm
  header.write('n+1\0', 344, 'latin1');
  return header;
}

import type { Readable } from 'node:stream';
import { fail } from '#shared/formats/formatFailure';
import type { VoxelDecoder } from './voxelDecoder';

/** The three orthogonal middle planes of the first volume, row-major, in voxel order. */
export interface MiddleSlices {
  readonly nx: number;
  readonly ny: number;
  readonly nz: number;
  /** z = middle: nx × ny. */
  readonly axial: Float32Array;
  /** y = middle: nx × nz. */
  readonly coronal: Float32Array;
  /** x = middle: ny × nz. */
  readonly sagittal: Float32Array;
}

/**
 * Reads the first volume from a stream of the (decompressed) file, row by row (nx voxels), keeping
 * only the three middle planes: memory is three planes and one row, whatever the volume's size.
 */
export async function middleSlices(
  stream: Readable,
  geometry: { voxOffset: number; shape: readonly number[]; bytesPerVoxel: number },
  decode: VoxelDecoder,
): Promise<MiddleSlices> {
  const [nx = 1, ny = 1, nz = 1] = geometry.shape;
  const collector = new SliceCollector(nx, ny, nz, decode);
  const rowBytes = nx * geometry.bytesPerVoxel;
  const row = Buffer.alloc(rowBytes);
  const totalRows = ny * nz;
  let skip = geometry.voxOffset;
  let fill = 0;
  let rows = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let offset = Math.min(skip, chunk.length);
      skip -= offset;
      while (offset < chunk.length && rows < totalRows) {
        const take = Math.min(rowBytes - fill, chunk.length - offset);
        chunk.copy(row, fill, offset, offset + take);
        fill += take;
        offset += take;
        if (fill === rowBytes) {
          collector.take(row, rows++);
          fill = 0;
        }
      }
      if (rows >= totalRows) break;
    }
  } finally {
    stream.destroy();
  }
  if (rows < totalRows) {
    const needed = geometry.voxOffset + totalRows * rowBytes;
    fail(`truncated NIfTI data: the first volume ends at byte ${needed}, the data stops before it`);
  }
  return collector.slices();
}

class SliceCollector {
  private readonly axial: Float32Array;
  private readonly coronal: Float32Array;
  private readonly sagittal: Float32Array;
  private readonly middle: { x: number; y: number; z: number };

  constructor(
    private readonly nx: number,
    private readonly ny: number,
    private readonly nz: number,
    private readonly decode: VoxelDecoder,
  ) {
    this.axial = new Float32Array(nx * ny);
    this.coronal = new Float32Array(nx * nz);
    this.sagittal = new Float32Array(ny * nz);
    this.middle = { x: Math.floor(nx / 2), y: Math.floor(ny / 2), z: Math.floor(nz / 2) };
  }

  take(row: Buffer, index: number): void {
    const y = index % this.ny;
    const z = Math.floor(index / this.ny);
    this.sagittal[z * this.ny + y] = this.decode(row, this.middle.x);
    if (z === this.middle.z) this.decodeRow(row, this.axial, y * this.nx);
    if (y === this.middle.y) this.decodeRow(row, this.coronal, z * this.nx);
  }

  slices(): MiddleSlices {
    const { nx, ny, nz, axial, coronal, sagittal } = this;
    return { nx, ny, nz, axial, coronal, sagittal };
  }

  private decodeRow(row: Buffer, target: Float32Array, start: number): void {
    for (let x = 0; x < this.nx; x++) target[start + x] = this.decode(row, x);
  }
}

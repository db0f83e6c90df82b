import { fail } from '#shared/formats/formatFailure';
import type { FormatReader, Metadata } from '#shared/formats/inspection';
import { isGzip, openMaybeGzipped } from '#shared/formats/openMaybeGzipped';
import { pixelSize, renderPlanes, type Plane } from '#shared/formats/preview/renderPlanes';
import type { ReadContext } from '#shared/formats/readContext';
import { readPrefix } from '#shared/formats/readPrefix';
import { middleSlices, type MiddleSlices } from './middleSlices';
import { niftiMetadata } from './niftiMetadata';
import { parseNiftiHeader, type NiftiHeader } from './parseNiftiHeader';
import { voxelDecoder } from './voxelDecoder';

const headerBytes = 540;

/** NIfTI-1 and NIfTI-2, either byte order, plain or gzipped (recognised by its bytes, not its name). */
export class NiftiReader implements FormatReader {
  private header: NiftiHeader | undefined;
  private gzip = false;

  constructor(private readonly context: ReadContext) {}

  async readMetadata(): Promise<Metadata> {
    const rawHead = await this.context.read(0, headerBytes);
    this.gzip = isGzip(rawHead);
    const head = this.gzip
      ? await readPrefix(await openMaybeGzipped(this.context, true), headerBytes)
      : rawHead;
    const header = await parseNiftiHeader(head, rawHead);
    if (!this.gzip) this.checkComplete(header);
    this.header = header;
    return niftiMetadata(header, this.gzip ? 'gzip' : null);
  }

  async preview(): Promise<Buffer | null> {
    const header = this.header ?? fail('NIfTI preview before its header');
    const decode = voxelDecoder(header.datatype, header.littleEndian);
    const [nx = 1, ny = 1, nz = 1] = header.shape;
    const { limits } = this.context;
    if (!decode || nx * ny + nx * nz + ny * nz > limits.maxPreviewVoxels) return null;
    if (nx * ny * nz < 4) return null; // e.g. CIFTI matrices: no image in the spatial axes
    const { budget } = this.context;
    const what = `the first volume (${nx}×${ny}×${nz} of ${header.datatype.name})`;
    budget.allowDecoded(nx * header.datatype.bytes, `a row of ${what}`);
    if (this.gzip) budget.allowDecompressing(header.voxOffset + nx * ny * nz * header.datatype.bytes, what);
    const stream = await openMaybeGzipped(this.context, this.gzip);
    const geometry = {
      voxOffset: header.voxOffset,
      shape: header.shape,
      bytesPerVoxel: header.datatype.bytes,
    };
    const slices = await middleSlices(stream, geometry, decode);
    return renderPlanes(planesOf(slices, header.voxelSizes));
  }

  /** An uncompressed file must hold every voxel its header declares. */
  private checkComplete(header: NiftiHeader): void {
    const voxels = header.shape.reduce((product, size) => product * size, 1);
    const expected = header.voxOffset + Math.ceil(voxels * header.datatype.bytes);
    if (this.context.size < expected) {
      fail(`truncated NIfTI file: ${this.context.size} bytes, its header declares ${expected}`);
    }
  }
}

function planesOf(slices: MiddleSlices, voxelSizes: readonly number[]): Plane[] {
  const [dx, dy, dz] = [0, 1, 2].map((axis) => pixelSize(voxelSizes[axis])) as [number, number, number];
  const { nx, ny, nz } = slices;
  const axial = { width: nx, height: ny, values: slices.axial, pixelWidth: dx, pixelHeight: dy, flipY: true };
  if (nz === 1) return [axial];
  return [
    axial,
    { width: nx, height: nz, values: slices.coronal, pixelWidth: dx, pixelHeight: dz, flipY: true },
    { width: ny, height: nz, values: slices.sagittal, pixelWidth: dy, pixelHeight: dz, flipY: true },
  ];
}

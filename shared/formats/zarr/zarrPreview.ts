import { fail } from '#shared/formats/formatFailure';
import type { InspectionBudget } from '#shared/formats/inspectionBudget';
import { pixelSize, renderPlanes, type Plane } from '#shared/formats/preview/renderPlanes';
import { chunkCodec, type ChunkCodec } from './chunkCodec';
import type { ZarrArrayMeta } from './zarrArrayMeta';
import type { ZipArchive, ZipEntry } from './zipArchive';

/** Chunks (zip entries) a preview may read: tiny chunks would mean a range read per few voxels. */
const maxPreviewChunks = 4096;

/**
 * Middle slices of one array (the coarsest multiscale level): its last three axes (z, y, x) as three
 * orthogonal views, or its last two as one image, every leading axis (t, c) at its middle. Only the
 * chunks crossing that region are read; the region is bounded by maxPreviewVoxels, one chunk and
 * all of them together by the inspection's budget, checked before the first is read.
 */
export async function zarrPreview(
  zip: ZipArchive,
  root: string,
  meta: ZarrArrayMeta,
  scale: readonly number[] | null,
  budget: InspectionBudget,
): Promise<Buffer | null> {
  const codec = chunkCodec(meta);
  const ndim = meta.shape.length;
  if (!codec || ndim < 2 || meta.shape.some((size) => size === 0)) return null;
  const spatial = Math.min(3, ndim);
  const region = meta.shape.slice(ndim - spatial);
  const voxels = region.reduce((product, size) => product * size, 1);
  if (voxels > budget.limits.maxPreviewVoxels) return null;
  const fixed = meta.shape.slice(0, ndim - spatial).map((size) => Math.floor(size / 2));
  const chunks = chunksCrossing(meta, fixed);
  if (chunks.length > maxPreviewChunks) return null;
  const prefix = `${root}${meta.path === '' ? '' : `${meta.path}/`}`;
  const stored = chunks.flatMap((index) => {
    const entry = zip.entries.get(prefix + meta.chunkKey(index));
    return entry ? [{ index, entry }] : []; // a missing chunk holds the fill value
  });
  const rawBytes = meta.chunks.reduce((product, size) => product * size, codec.itemSize);
  budget.allowDecoded(
    rawBytes,
    `a Zarr chunk of ${rawBytes} bytes (chunks [${meta.chunks.join(',')}] of ${meta.dtype})`,
  );
  budget.allowDecompressing(
    stored.reduce((sum, { entry }) => sum + rawBytes + entry.uncompressedSize, 0),
    `the ${stored.length} Zarr chunks of the preview`,
  );
  const values = new Float32Array(voxels).fill(fillOf(meta.fillValue));
  for (const { index, entry } of stored) {
    const raw = await readChunk(zip, entry, codec, rawBytes, budget);
    copyChunk(raw, meta, codec, index, fixed, values, region);
  }
  const sizes = region.map((_, axis) => pixelSize(scale?.[ndim - spatial + axis]));
  return renderPlanes(planes(values, region, sizes));
}

function fillOf(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** Chunk grid indices: leading axes at the chunk holding the middle, spatial axes all chunks. */
function chunksCrossing(meta: ZarrArrayMeta, fixed: readonly number[]): number[][] {
  const ranges = meta.shape.map((size, axis) => {
    const chunk = meta.chunks[axis] ?? 1;
    if (axis < fixed.length) return [Math.floor((fixed[axis] ?? 0) / chunk)];
    return Array.from({ length: Math.ceil(size / chunk) }, (_, index) => index);
  });
  return ranges.reduce<number[][]>(
    (combos, range) => combos.flatMap((combo) => range.map((index) => [...combo, index])),
    [[]],
  );
}

/** A chunk's bytes, inflated to at most the chunk's raw size (counted against the budget). */
async function readChunk(
  zip: ZipArchive,
  entry: ZipEntry,
  codec: ChunkCodec,
  rawBytes: number,
  budget: InspectionBudget,
): Promise<Buffer> {
  const stored = await zip.read(entry, rawBytes + 2 ** 20); // a source fault propagates as is
  let raw: Buffer;
  try {
    raw = await codec.decompress(stored, rawBytes);
  } catch (error) {
    fail(`corrupt Zarr chunk ${entry.name}: ${(error as Error).message}`);
  }
  if (raw !== stored) budget.countDecompressed(raw.length);
  if (raw.length !== rawBytes)
    fail(`corrupt Zarr chunk ${entry.name}: ${raw.length} bytes, expected ${rawBytes}`);
  return raw;
}

/**
 * Copies the part of one chunk that lies in the preview's region: leading axes at their middle,
 * spatial axes within the array's shape (an edge chunk's padding is skipped without being read).
 */
function copyChunk(
  raw: Buffer,
  meta: ZarrArrayMeta,
  codec: ChunkCodec,
  chunkIndex: number[],
  fixed: readonly number[],
  target: Float32Array,
  region: readonly number[],
): void {
  const lead = fixed.length;
  const ndim = meta.chunks.length;
  const origin = chunkIndex.map((index, axis) => index * (meta.chunks[axis] ?? 1));
  const ranges = meta.chunks.map((size, axis) => {
    const start = origin[axis] ?? 0;
    if (axis < lead) return [(fixed[axis] ?? 0) - start, (fixed[axis] ?? 0) - start + 1] as const;
    return [0, Math.min(size, (meta.shape[axis] ?? 0) - start)] as const;
  });
  const counts = ranges.map(([from, to]) => Math.max(0, to - from));
  const strides = meta.chunks.map((_, axis) =>
    meta.chunks.slice(axis + 1).reduce((product, size) => product * size, 1),
  );
  const total = counts.reduce((product, count) => product * count, 1);
  const local = new Array<number>(ndim).fill(0);
  for (let n = 0; n < total; n++) {
    let rest = n;
    for (let axis = ndim - 1; axis >= 0; axis--) {
      const count = counts[axis] ?? 1;
      local[axis] = (ranges[axis]?.[0] ?? 0) + (rest % count);
      rest = Math.floor(rest / count);
    }
    let flat = 0;
    let index = 0;
    for (let axis = 0; axis < ndim; axis++) {
      flat += (local[axis] ?? 0) * (strides[axis] ?? 1);
      if (axis >= lead) index = index * (region[axis - lead] ?? 1) + (origin[axis] ?? 0) + (local[axis] ?? 0);
    }
    target[index] = codec.element(raw, flat);
  }
}

function planes(values: Float32Array, region: readonly number[], sizes: readonly number[]): Plane[] {
  if (region.length === 2) {
    const [ny = 1, nx = 1] = region;
    const [dy = 1, dx = 1] = sizes;
    return [{ width: nx, height: ny, values, pixelWidth: dx, pixelHeight: dy, flipY: false }];
  }
  const [nz = 1, ny = 1, nx = 1] = region;
  const [dz = 1, dy = 1, dx = 1] = sizes;
  const at = (z: number, y: number, x: number): number => values[(z * ny + y) * nx + x] ?? NaN;
  const [zm, ym, xm] = [Math.floor(nz / 2), Math.floor(ny / 2), Math.floor(nx / 2)];
  const plane = (width: number, height: number, get: (column: number, row: number) => number): Float32Array =>
    Float32Array.from({ length: width * height }, (_, index) =>
      get(index % width, Math.floor(index / width)),
    );
  return [
    {
      width: nx,
      height: ny,
      values: plane(nx, ny, (x, y) => at(zm, y, x)),
      pixelWidth: dx,
      pixelHeight: dy,
      flipY: false,
    },
    {
      width: nx,
      height: nz,
      values: plane(nx, nz, (x, z) => at(z, ym, x)),
      pixelWidth: dx,
      pixelHeight: dz,
      flipY: false,
    },
    {
      width: ny,
      height: nz,
      values: plane(ny, nz, (y, z) => at(z, y, xm)),
      pixelWidth: dy,
      pixelHeight: dz,
      flipY: false,
    },
  ];
}

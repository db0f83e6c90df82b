import { gzipSync } from 'node:zlib';
import { jpegGray } from './jpegGray';
import { lzwZeros, packBitsZeros } from './lzwCodes';
import { tiffFile } from './tiffFile';
import { deflatedZeros } from './zeroStreams';
import { zipFile } from './zipFile';

/**
 * The security sweep's files, crafted in memory: each declares little (or something plausible) and
 * costs a naive reader far more. `inflate` is how many bytes the payload really expands to.
 */

const side = 64;
const tiny = { width: side, height: side };

/** A 64×64 8-bit page whose one deflate strip (zlib, code 8 or 32946) inflates to `inflate` bytes. */
export function deflateStripTiff(inflate: number, compression: 8 | 32946 = 32946): Buffer {
  return tiffFile([{ ...tiny, compression, blocks: [deflatedZeros(inflate, 'zlib')] }]);
}

/** The same as one 64×64 tile. */
export function deflateTileTiff(inflate: number): Buffer {
  return tiffFile([
    {
      ...tiny,
      compression: 8,
      tile: { width: side, length: side },
      blocks: [deflatedZeros(inflate, 'zlib')],
    },
  ]);
}

export function lzwStripTiff(inflate: number): Buffer {
  return tiffFile([{ ...tiny, compression: 5, blocks: [lzwZeros(inflate)] }]);
}

export function packBitsStripTiff(inflate: number): Buffer {
  return tiffFile([{ ...tiny, compression: 32773, blocks: [packBitsZeros(inflate)] }]);
}

/** A 64×64 JPEG tile whose JPEG data declares `frameSide` × `frameSide` pixels. */
export function jpegTileTiff(frameSide: number): Buffer {
  return tiffFile([
    {
      ...tiny,
      compression: 7,
      tile: { width: side, length: side },
      blocks: [jpegGray(frameSide, frameSide, 64)],
    },
  ]);
}

/** A valid TIFF of `pages` 1×1 pages, each with its own one-byte strip. */
export function manyPagesTiff(pages: number): Buffer {
  return tiffFile(
    Array.from({ length: pages }, (_, index) => ({
      width: 1,
      height: 1,
      compression: 1,
      blocks: [Buffer.from([index % 256])],
    })),
  );
}

type Json = Record<string, unknown>;

/** A Zarr v2 array (zip) of the given shape and chunks (uint8) whose chunk 0.0… is `chunk`. */
export function zarrWithChunk(
  shape: number[],
  chunks: number[],
  compressor: Json | null,
  chunk: Buffer,
): Buffer {
  const zarray = {
    zarr_format: 2,
    shape,
    chunks,
    dtype: '|u1',
    compressor,
    fill_value: 0,
    order: 'C',
    filters: null,
  };
  return zipFile([
    { name: '.zarray', data: Buffer.from(JSON.stringify(zarray)) },
    { name: chunks.map(() => '0').join('.'), data: chunk },
  ]);
}

/** Shape [2,2,2] in chunks of `chunkSide`³ uint8: one zlib chunk inflating to `inflate` bytes. */
export function zarrZlibChunkBomb(chunkSide: number, inflate: number): Buffer {
  const chunks = [chunkSide, chunkSide, chunkSide];
  return zarrWithChunk([2, 2, 2], chunks, { id: 'zlib', level: 9 }, deflatedZeros(inflate, 'zlib'));
}

export function zarrGzipChunkBomb(chunkSide: number, inflate: number): Buffer {
  const chunks = [chunkSide, chunkSide, chunkSide];
  return zarrWithChunk([2, 2, 2], chunks, { id: 'gzip', level: 9 }, deflatedZeros(inflate, 'gzip'));
}

/** A zstd frame header declaring `declared` bytes, then garbage: the preview never decodes zstd. */
export function zarrZstdChunkBomb(chunkSide: number, declared: number): Buffer {
  const frame = Buffer.alloc(4 + 1 + 8 + 16);
  frame.writeUInt32LE(0xfd2fb528, 0);
  frame[4] = 0xe0; // 8-byte content size, single segment
  frame.writeBigUInt64LE(BigInt(declared), 5);
  const chunks = [chunkSide, chunkSide, chunkSide];
  return zarrWithChunk([2, 2, 2], chunks, { id: 'zstd', level: 3 }, frame);
}

/**
 * A NIfTI-1 header (little-endian, uint8 or int16) of the given shape, gzipped with its volume:
 * `volume` is the compressed stream of the voxel bytes that follow it.
 */
export function niftiGz(
  shape: [number, number, number],
  datatype: 'uint8' | 'int16',
  volume: Buffer[],
): Buffer {
  const header = Buffer.alloc(352);
  header.writeInt32LE(348, 0);
  header.writeInt16LE(3, 40);
  shape.forEach((size, axis) => header.writeInt16LE(size, 42 + axis * 2));
  for (let axis = 3; axis < 7; axis++) header.writeInt16LE(1, 42 + axis * 2);
  header.writeInt16LE(datatype === 'uint8' ? 2 : 4, 70);
  header.writeInt16LE(datatype === 'uint8' ? 8 : 16, 72);
  for (let axis = 0; axis < 4; axis++) header.writeFloatLE(1, 76 + axis * 4);
  header.writeFloatLE(352, 108);
  header.write('n+1\0', 344, 'latin1');
  return Buffer.concat([gzipSync(header), ...volume]);
}

/** A gzipped NIfTI whose first volume (side³ uint8) is zeros at deflate's best ratio: a gzip bomb. */
export function niftiGzipBomb(shapeSide: number): Buffer {
  const voxels = shapeSide ** 3;
  return niftiGz([shapeSide, shapeSide, shapeSide], 'uint8', [deflatedZeros(voxels, 'gzip')]);
}

/** A zip holding `entries` empty entries besides a Zarr group's .zgroup. */
export function manyEntriesZip(entries: number): Buffer {
  return zipFile([
    { name: '.zgroup', data: Buffer.from('{"zarr_format": 2}') },
    ...Array.from({ length: entries }, (_, index) => ({ name: `x/${index}`, data: Buffer.alloc(0) })),
  ]);
}

/** A zip within a zip … `depth` deep, the innermost a valid Zarr group. */
export function nestedZip(depth: number): Buffer {
  let inner = zipFile([{ name: '.zgroup', data: Buffer.from('{"zarr_format": 2}') }]);
  for (let level = 0; level < depth; level++) inner = zipFile([{ name: `level${level}.zip`, data: inner }]);
  return inner;
}

/** A Zarr whose chunk entry declares (zip64) an uncompressed size of 2^62 bytes, stored or deflated. */
export function zip64AbsurdChunk(deflate: boolean): Buffer {
  const zarray = { zarr_format: 2, shape: [4, 4], chunks: [4, 4], dtype: '|u1', compressor: null };
  return zipFile([
    {
      name: '.zarray',
      data: Buffer.from(JSON.stringify({ ...zarray, fill_value: 0, order: 'C', filters: null })),
    },
    { name: '0.0', data: Buffer.alloc(16, 7), deflate, declare: { uncompressed: 2 ** 62 } },
  ]);
}

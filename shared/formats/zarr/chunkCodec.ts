import { gunzipSync, inflateSync } from 'node:zlib';
import { bloscDecompress } from './bloscDecompress';
import type { ZarrArrayMeta } from './zarrArrayMeta';

/** How to turn a stored chunk into numbers: decompress, then read elements of one type and order. */
export interface ChunkCodec {
  readonly itemSize: number;
  decompress(stored: Buffer, rawBytes: number): Buffer | Promise<Buffer>;
  element(raw: Buffer, index: number): number;
}

type Json = Record<string, unknown>;

/**
 * The codecs a preview can decode: v2 no compressor, zlib, gzip or blosc (no filters, C order); v3
 * `bytes` optionally followed by `gzip` or `blosc`. Bare zstd, sharding, transpose and the rest:
 * undefined (metadata still lists them; the preview is skipped).
 */
export function chunkCodec(meta: ZarrArrayMeta): ChunkCodec | undefined {
  if (meta.codecs !== undefined) return v3Codec(meta);
  if (meta.order !== 'C' || (Array.isArray(meta.filters) && meta.filters.length > 0)) return undefined;
  const match = /^([<>|])([uifb])(\d)$/.exec(meta.dtype);
  const decompress = decompressor((meta.compressor as Json | null)?.id ?? null);
  if (!match || !decompress) return undefined;
  return elementCodec(match[2]!, Number(match[3]), match[1] !== '>', decompress);
}

function v3Codec(meta: ZarrArrayMeta): ChunkCodec | undefined {
  const codecs = (Array.isArray(meta.codecs) ? meta.codecs : []) as Json[];
  const [bytes, ...rest] = codecs;
  if (bytes?.name !== 'bytes' || rest.length > 1) return undefined;
  const decompress = decompressor(rest[0]?.name ?? null);
  const match = /^(uint|int|float|bool)(\d*)$/.exec(meta.dtype);
  if (!match || !decompress) return undefined;
  const kind = { uint: 'u', int: 'i', float: 'f', bool: 'b' }[match[1] as 'uint'];
  const size = match[1] === 'bool' ? 1 : Number(match[2]) / 8;
  const endian = (bytes.configuration as Json | undefined)?.endian;
  return elementCodec(kind, size, endian !== 'big', decompress);
}

type Decompress = (stored: Buffer, rawBytes: number) => Buffer | Promise<Buffer>;

/** Bounded: never inflates past the chunk's raw size (a bomb fails instead). */
function decompressor(id: unknown): Decompress | undefined {
  if (id === null) return (stored) => stored;
  if (id === 'zlib')
    return (stored, rawBytes) => inflateSync(stored, { maxOutputLength: Math.max(1, rawBytes) });
  if (id === 'gzip')
    return (stored, rawBytes) => gunzipSync(stored, { maxOutputLength: Math.max(1, rawBytes) });
  if (id === 'blosc') return bloscDecompress;
  return undefined;
}

function elementCodec(
  kind: string,
  size: number,
  le: boolean,
  decompress: Decompress,
): ChunkCodec | undefined {
  const read = reader(`${kind}${size}`, le);
  return read ? { itemSize: size, decompress, element: (raw, index) => read(raw, index * size) } : undefined;
}

function reader(key: string, le: boolean): ((buffer: Buffer, offset: number) => number) | undefined {
  const readers: Record<string, (buffer: Buffer, offset: number) => number> = {
    b1: (b, o) => b.readUInt8(o),
    u1: (b, o) => b.readUInt8(o),
    i1: (b, o) => b.readInt8(o),
    u2: le ? (b, o) => b.readUInt16LE(o) : (b, o) => b.readUInt16BE(o),
    i2: le ? (b, o) => b.readInt16LE(o) : (b, o) => b.readInt16BE(o),
    u4: le ? (b, o) => b.readUInt32LE(o) : (b, o) => b.readUInt32BE(o),
    i4: le ? (b, o) => b.readInt32LE(o) : (b, o) => b.readInt32BE(o),
    u8: le ? (b, o) => Number(b.readBigUInt64LE(o)) : (b, o) => Number(b.readBigUInt64BE(o)),
    i8: le ? (b, o) => Number(b.readBigInt64LE(o)) : (b, o) => Number(b.readBigInt64BE(o)),
    f4: le ? (b, o) => b.readFloatLE(o) : (b, o) => b.readFloatBE(o),
    f8: le ? (b, o) => b.readDoubleLE(o) : (b, o) => b.readDoubleBE(o),
  };
  return readers[key];
}

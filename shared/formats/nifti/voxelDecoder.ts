import type { NiftiDatatype } from './niftiCodes';

/** Reads voxel `index` of a row buffer as one number; undefined for datatypes a preview cannot show. */
export type VoxelDecoder = (row: Buffer, index: number) => number;

export function voxelDecoder(datatype: NiftiDatatype, littleEndian: boolean): VoxelDecoder | undefined {
  const bytes = datatype.bytes;
  const number = numberReader(datatype, littleEndian);
  if (number) return (row, index) => number(row, index * bytes);
  if (datatype.scalar === 'complex') {
    const part = numberReader({ ...datatype, scalar: 'float', bytes: bytes / 2 }, littleEndian);
    if (!part) return undefined;
    return (row, index) => Math.hypot(part(row, index * bytes), part(row, index * bytes + bytes / 2));
  }
  if (datatype.scalar === 'rgb' || datatype.scalar === 'rgba') {
    return (row, index) => {
      const at = index * bytes;
      return 0.299 * (row[at] ?? 0) + 0.587 * (row[at + 1] ?? 0) + 0.114 * (row[at + 2] ?? 0);
    };
  }
  return undefined;
}

type NumberReader = (buffer: Buffer, offset: number) => number;

function numberReader(datatype: NiftiDatatype, le: boolean): NumberReader | undefined {
  const key = `${datatype.scalar ?? ''}${datatype.bytes * 8}`;
  switch (key) {
    case 'uint8':
      return (b, o) => b.readUInt8(o);
    case 'int8':
      return (b, o) => b.readInt8(o);
    case 'uint16':
      return le ? (b, o) => b.readUInt16LE(o) : (b, o) => b.readUInt16BE(o);
    case 'int16':
      return le ? (b, o) => b.readInt16LE(o) : (b, o) => b.readInt16BE(o);
    case 'uint32':
      return le ? (b, o) => b.readUInt32LE(o) : (b, o) => b.readUInt32BE(o);
    case 'int32':
      return le ? (b, o) => b.readInt32LE(o) : (b, o) => b.readInt32BE(o);
    case 'uint64':
      return le ? (b, o) => Number(b.readBigUInt64LE(o)) : (b, o) => Number(b.readBigUInt64BE(o));
    case 'int64':
      return le ? (b, o) => Number(b.readBigInt64LE(o)) : (b, o) => Number(b.readBigInt64BE(o));
    case 'float32':
      return le ? (b, o) => b.readFloatLE(o) : (b, o) => b.readFloatBE(o);
    case 'float64':
      return le ? (b, o) => b.readDoubleLE(o) : (b, o) => b.readDoubleBE(o);
    default:
      return undefined;
  }
}

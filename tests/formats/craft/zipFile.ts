import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipInput {
  readonly name: string;
  readonly data: Buffer;
  /** Deflate the data (default: stored as is). */
  readonly deflate?: boolean;
  /** Sizes to declare instead of the real ones (written as zip64 when they need 64 bits). */
  readonly declare?: { readonly compressed?: number; readonly uncompressed?: number };
}

const max32 = 0xffffffff;

/** A zip of the entries, in order: local headers and data, central directory, end record. */
export function zipFile(entries: readonly ZipInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const body = entry.deflate ? deflateRawSync(entry.data) : entry.data;
    const compressed = entry.declare?.compressed ?? body.length;
    const uncompressed = entry.declare?.uncompressed ?? entry.data.length;
    const zip64 = compressed >= max32 || uncompressed >= max32;
    const extra = zip64 ? zip64Extra(uncompressed, compressed) : Buffer.alloc(0);
    const fields = {
      method: entry.deflate ? 8 : 0,
      crc: crc32(entry.data),
      compressed: zip64 ? max32 : compressed,
      uncompressed: zip64 ? max32 : uncompressed,
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(zip64 ? 45 : 20, 4);
    local.writeUInt16LE(fields.method, 8);
    local.writeUInt32LE(fields.crc, 14);
    local.writeUInt32LE(fields.compressed, 18);
    local.writeUInt32LE(fields.uncompressed, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(zip64 ? 45 : 20, 4);
    central.writeUInt16LE(zip64 ? 45 : 20, 6);
    central.writeUInt16LE(fields.method, 10);
    central.writeUInt32LE(fields.crc, 16);
    central.writeUInt32LE(fields.compressed, 20);
    central.writeUInt32LE(fields.uncompressed, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, extra, body);
    centrals.push(central, name, extra);
    offset += local.length + name.length + extra.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

function zip64Extra(uncompressed: number, compressed: number): Buffer {
  const extra = Buffer.alloc(20);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(16, 2);
  extra.writeBigUInt64LE(BigInt(uncompressed), 4);
  extra.writeBigUInt64LE(BigInt(compressed), 12);
  return extra;
}

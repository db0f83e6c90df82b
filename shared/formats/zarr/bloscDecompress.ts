import { fail } from '#shared/formats/formatFailure';
import { loadOnce } from '#shared/formats/loadOnce';

/**
 * numcodecs' own declarations do not resolve under nodenext (an extensionless relative import in
 * an ESM package), so the part used here is declared locally.
 */
interface BloscModule {
  default: {
    fromConfig(config: { id: 'blosc' }): {
      decode(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
    };
  };
}

/** numcodecs' Blosc, imported on first use, once. */
const bloscModule = loadOnce(() => import('numcodecs/blosc') as Promise<unknown> as Promise<BloscModule>);

/**
 * Blosc (zarr-python's default compressor), decoded by numcodecs' WebAssembly build of c-blosc
 * (lz4, blosclz, zlib, zstd inside; byte and bit shuffle). The frame's header declares its
 * uncompressed size: checked against the chunk's size before anything is inflated.
 */
export async function bloscDecompress(stored: Buffer, rawBytes: number): Promise<Buffer> {
  if (stored.length < 16) fail(`a Blosc frame of ${stored.length} bytes is too short`);
  const declared = stored.readUInt32LE(4);
  if (declared !== rawBytes) fail(`a Blosc frame declares ${declared} bytes, the chunk holds ${rawBytes}`);
  const { default: Blosc } = await bloscModule();
  const codec = Blosc.fromConfig({ id: 'blosc' });
  const decoded = await codec.decode(new Uint8Array(stored.buffer, stored.byteOffset, stored.length));
  return Buffer.from(decoded.buffer, decoded.byteOffset, decoded.byteLength);
}

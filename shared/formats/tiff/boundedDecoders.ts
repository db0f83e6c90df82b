import { inflateSync, constants } from 'node:zlib';
import { BaseDecoder, getDecoder, type Pool } from 'geotiff';
import { fail } from '#shared/formats/formatFailure';
import type { InspectionBudget } from '#shared/formats/inspectionBudget';
import { jpegFrames } from './jpegFrameSize';
import { lzwDecode } from './lzwDecode';
import { packBitsDecode } from './packBitsDecode';
import { zstdContentSize } from './zstdContentSize';

/** What geotiff hands a decoder: the block's size in pixels and its sample layout. */
interface DecoderParameters {
  readonly tileWidth: number;
  readonly tileHeight: number;
  readonly bitsPerSample: number | ArrayLike<number>;
  readonly planarConfiguration: number;
  readonly predictor: number;
  readonly JPEGTables?: Uint8Array;
}

/**
 * The compressions a preview decodes, each bounded by what the block's own fields allow (width ×
 * rows × bytes per pixel): none, LZW, deflate and Adobe deflate, PackBits, JPEG, zstd. Left out,
 * metadata still read: LERC (geotiff's decoder sizes its output from the LERC blob's own header,
 * which is not checked here, after inflating it without a bound), WebP (needs a browser), CCITT,
 * JPEG 2000 and old-style JPEG (geotiff has no decoder).
 */
export const boundedCompressions: ReadonlySet<number> = new Set([1, 5, 7, 8, 32773, 32946, 50000]);

/** Bytes one strip or tile decodes to, by its fields. */
export function blockBytes(parameters: DecoderParameters): number {
  const bits = Array.from(
    typeof parameters.bitsPerSample === 'number' ? [parameters.bitsPerSample] : parameters.bitsPerSample,
  );
  const pixelBits =
    parameters.planarConfiguration === 2 ? Math.max(...bits) : bits.reduce((sum, value) => sum + value, 0);
  return Math.ceil((parameters.tileWidth * pixelBits) / 8) * parameters.tileHeight;
}

/** The page's blocks: strips or tiles, and their rows (a strip's clamped to the page's height). */
export interface PageBlocks {
  readonly kind: 'strip' | 'tile';
  readonly rows: number;
}

/**
 * A stand-in for geotiff's decoder pool (readRasters asks it for a decoder per page): every block
 * goes through a bounded decoder and its output is counted against the inspection's budget. A
 * strip's rows are those geotiff reads (RowsPerStrip at most the page's height): the "all in one
 * strip" value 2^32-1 some writers use then bounds nothing, nor drives the predictor's row loop.
 */
export function boundedDecoderPool(budget: InspectionBudget, blocks: PageBlocks): Pool {
  const block = blocks.kind;
  const pool = {
    bindParameters: (compression: number, declared: DecoderParameters) => ({
      decode: async (buffer: ArrayBuffer): Promise<ArrayBufferLike> => {
        const parameters = { ...declared, tileHeight: Math.min(declared.tileHeight, blocks.rows) };
        const bound = blockBytes(parameters);
        const what = `a TIFF ${block} of ${parameters.tileWidth}×${parameters.tileHeight} pixels (${bound} bytes)`;
        budget.allowDecoded(bound, what);
        const decoder = await decoderFor(compression, parameters, bound, what);
        const decoded = await decoder.decode(buffer);
        if (compression !== 1) budget.countDecompressed(decoded.byteLength); // raw: read, not inflated
        return decoded;
      },
    }),
  };
  return pool as unknown as Pool;
}

type BlockDecoder = (input: Uint8Array) => Uint8Array | ArrayBufferLike;

async function decoderFor(
  compression: number,
  parameters: DecoderParameters,
  bound: number,
  what: string,
): Promise<{ decode(buffer: ArrayBuffer): Promise<ArrayBufferLike> }> {
  switch (compression) {
    case 1:
      return withPredictor(parameters, (input) => input);
    case 5:
      return withPredictor(parameters, (input) => lzwDecode(input, bound, what));
    case 8:
    case 32946:
      return withPredictor(parameters, (input) => inflateBounded(input, bound, what));
    case 32773:
      return withPredictor(parameters, (input) => packBitsDecode(input, bound, what));
    case 7:
      return jpegDecoder(parameters, bound, what);
    case 50000:
      return zstdDecoder(parameters, bound, what);
    default:
      return fail(`TIFF compression ${compression} is not decoded for a preview`);
  }
}

/** geotiff's BaseDecoder applies the predictor (horizontal differencing, floating point). */
function withPredictor(parameters: DecoderParameters, decodeBlock: BlockDecoder): BaseDecoder {
  const decoder = new (class extends BaseDecoder {
    override decodeBlock(buffer: ArrayBufferLike): ArrayBufferLike {
      const decoded = decodeBlock(new Uint8Array(buffer));
      if (!ArrayBuffer.isView(decoded)) return decoded;
      if (decoded.byteOffset === 0 && decoded.byteLength === decoded.buffer.byteLength) return decoded.buffer;
      return decoded.slice().buffer; // geotiff reads the whole ArrayBuffer
    }
  })(parameters as never);
  return decoder;
}

/**
 * zlib with its output capped: past the bound the data is a bomb. A stream cut short of its
 * checksum still yields what it holds, as libtiff and pako allow.
 */
function inflateBounded(input: Uint8Array, bound: number, what: string): Uint8Array {
  try {
    return inflateSync(input, { maxOutputLength: Math.max(1, bound), finishFlush: constants.Z_SYNC_FLUSH });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      fail(`${what}: its deflate data inflates past the ${bound} bytes it may hold`);
    }
    return fail(`${what}: corrupt deflate data (${(error as Error).message})`);
  }
}

/**
 * geotiff's JPEG decoder allocates by the frame size the JPEG declares: that size is checked
 * against the block's first (a JPEG block is at most its tile, padded to whole 16-pixel MCUs).
 */
async function jpegDecoder(
  parameters: DecoderParameters,
  bound: number,
  what: string,
): Promise<{ decode(buffer: ArrayBuffer): Promise<ArrayBufferLike> }> {
  const checkFrames = (data: Uint8Array): void => {
    for (const frame of jpegFrames(data)) {
      const [width, height] = [frame.width, frame.height];
      if (width > padded(parameters.tileWidth) || height > padded(parameters.tileHeight)) {
        fail(`${what}: its JPEG data declares ${width}×${height} pixels`);
      }
      if (
        width * height * frame.components >
        padded(parameters.tileWidth) * padded(parameters.tileHeight) * 4
      ) {
        fail(`${what}: its JPEG data declares ${frame.components} components`);
      }
    }
  };
  if (parameters.JPEGTables) checkFrames(parameters.JPEGTables);
  const decoder = await getDecoder(7, parameters as never);
  return {
    decode: (buffer) => {
      checkFrames(new Uint8Array(buffer));
      return decoder.decode(buffer);
    },
  };
}

/**
 * geotiff's zstd decoder allocates what the frames declare (or, when a frame does not declare its
 * size, grows without bound): the declared sizes are read and checked against the block's first.
 */
async function zstdDecoder(
  parameters: DecoderParameters,
  bound: number,
  what: string,
): Promise<{ decode(buffer: ArrayBuffer): Promise<ArrayBufferLike> }> {
  const decoder = await getDecoder(50000, parameters as never);
  return {
    decode: (buffer) => {
      const declared = zstdContentSize(new Uint8Array(buffer), what);
      if (declared === undefined) fail(`${what}: its zstd data does not declare its size`);
      if (declared > bound) fail(`${what}: its zstd data declares ${declared} bytes`);
      return decoder.decode(buffer);
    },
  };
}

const padded = (size: number): number => Math.ceil(size / 16) * 16;

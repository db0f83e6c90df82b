import { PassThrough, type Readable } from 'node:stream';
import * as yauzl from 'yauzl';
import { fail, FormatFailure } from '#shared/formats/formatFailure';
import { maxZipCompressionRatio } from '#shared/formats/inspectionLimits';
import { BLOCK_SIZE, CachedBlocks } from '#shared/formats/cachedBlocks';
import type { ReadContext } from '#shared/formats/readContext';
import { lookLike, sniffFormat } from '#shared/formats/sniffFormat';

/** An entry of the central directory: what the archive declares, before anything is inflated. */
export interface ZipEntry {
  readonly name: string;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly entry: yauzl.Entry;
}

const maxCachedBlocks = 64;

/**
 * yauzl's random-access reader over a ReadContext. yauzl reads the central directory entry by
 * entry, two small reads each: those (up to 64 KiB) are copied from an LRU of 64 KiB blocks, with
 * no stream per read, so a directory of 65,000 entries costs some fifty range requests, not
 * 130,000 streams. Entry data streams straight from the source; yauzl asks for a stream synchronously, the source opens
 * asynchronously, so a PassThrough stands in until the range arrives. A source error passes
 * through unchanged (still recognisable as a fault).
 */
class ContextReader extends yauzl.RandomAccessReader {
  private readonly blocks: CachedBlocks;

  constructor(private readonly context: ReadContext) {
    super();
    this.blocks = new CachedBlocks(context, maxCachedBlocks);
  }

  /** yauzl's small reads (directory entries, local headers): copied from cached blocks, no stream. */
  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (error: Error | null) => void,
  ): void {
    if (length > BLOCK_SIZE) return super.read(buffer, offset, length, position, callback);
    this.blocks.read(position, position + length).then(
      (bytes) => {
        if (bytes.length < length) return callback(new Error('unexpected EOF'));
        bytes.copy(buffer, offset);
        callback(null);
      },
      (error: Error) => callback(error),
    );
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const stream = new PassThrough();
    this.context.open(start, end - 1).then(
      (source) => {
        if (stream.destroyed) return void source.destroy(); // yauzl gave up on it meanwhile
        source.on('error', (error) => stream.destroy(error));
        stream.on('close', () => source.destroy());
        source.pipe(stream);
      },
      (error: Error) => stream.destroy(error),
    );
    return stream;
  }
}

/**
 * A zip read by random access: the central directory first (entry count bounded before any entry is
 * listed), then only the entries asked for, each bounded in size and compression ratio.
 */
export class ZipArchive {
  private constructor(
    private readonly zip: yauzl.ZipFile,
    readonly entries: ReadonlyMap<string, ZipEntry>,
    private readonly context: ReadContext,
  ) {}

  static async open(context: ReadContext): Promise<ZipArchive> {
    const head = await context.read(0, 8);
    const zip = await openZip(context, head);
    const { maxZipEntries } = context.limits;
    if (zip.entryCount > maxZipEntries) {
      zip.close();
      fail(
        `zip bomb: the archive declares ${zip.entryCount} entries, more than the limit of ${maxZipEntries}`,
      );
    }
    try {
      return new ZipArchive(zip, await listEntries(zip, context), context);
    } catch (error) {
      zip.close();
      if (context.isSourceFault(error) || !(error instanceof Error) || error instanceof FormatFailure)
        throw error;
      return fail(`corrupt zip archive: its central directory is invalid (${error.message})`);
    }
  }

  close(): void {
    this.zip.close();
  }

  /** An entry's bytes, refusing entries over the size limit or with a bomb's compression ratio. */
  async read(entry: ZipEntry, maxBytes: number): Promise<Buffer> {
    checkEntry(entry, Math.min(maxBytes, this.context.limits.maxDecodedBytes));
    const stream = await new Promise<Readable>((resolve, reject) => {
      this.zip.openReadStream(entry.entry, (error, readable) => (error ? reject(error) : resolve(readable)));
    });
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > entry.uncompressedSize) fail(`zip bomb: ${entry.name} inflates past its declared size`);
      chunks.push(chunk);
    }
    if (entry.entry.compressionMethod !== 0) this.context.budget.countDecompressed(total);
    return Buffer.concat(chunks);
  }
}

async function openZip(context: ReadContext, head: Buffer): Promise<yauzl.ZipFile> {
  const reader = new ContextReader(context);
  const options = { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false };
  try {
    return await new Promise<yauzl.ZipFile>((resolve, reject) => {
      yauzl.fromRandomAccessReader(reader, context.size, options, (error, zip) =>
        error ? reject(error) : resolve(zip),
      );
    });
  } catch (error) {
    if (context.isSourceFault(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (sniffFormat(head) === 'a zip archive') return fail(`truncated or corrupt zip archive: ${message}`);
    return fail(`not a zip archive (a .zarr upload is a zip of a Zarr store): ${message}${lookLike(head)}`);
  }
}

async function listEntries(zip: yauzl.ZipFile, context: ReadContext): Promise<Map<string, ZipEntry>> {
  const entries = new Map<string, ZipEntry>();
  let declared = 0;
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      declared += entry.uncompressedSize;
      entries.set(entry.fileName, {
        name: entry.fileName,
        compressedSize: entry.compressedSize,
        uncompressedSize: entry.uncompressedSize,
        entry,
      });
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.on('error', reject);
    zip.readEntry();
  });
  if (declared > 64 * 2 ** 20 && declared / context.size > maxZipCompressionRatio) {
    fail(`zip bomb: the archive declares ${declared} bytes uncompressed in ${context.size} bytes`);
  }
  return entries;
}

function checkEntry(entry: ZipEntry, maxBytes: number): void {
  if (entry.uncompressedSize > maxBytes) {
    fail(`${entry.name} is too large to inspect: ${entry.uncompressedSize} bytes, the limit is ${maxBytes}`);
  }
  const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
  if (entry.uncompressedSize > 2 ** 20 && ratio > maxZipCompressionRatio) {
    fail(`zip bomb: ${entry.name} declares a compression ratio of ${Math.round(ratio)}:1`);
  }
}

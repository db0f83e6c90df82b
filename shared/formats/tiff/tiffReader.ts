import { GeoTIFF, GeoTIFFImage } from 'geotiff';
import { fail } from '#shared/formats/formatFailure';
import type { FormatReader, Metadata } from '#shared/formats/inspection';
import type { ReadContext } from '#shared/formats/readContext';
import { lookLike } from '#shared/formats/sniffFormat';
import { BlockSource } from './blockSource';
import { isOmeXml, parseOmeXml, type OmeInfo } from './omeXml';
import { tiffPreview } from './tiffPreview';
import { compressionNames, photometricNames, sampleFormatNames } from './tiffCodes';
import { pageOffsets, tiffLayout, type TiffLayout } from './walkIfds';

/**
 * TIFF and BigTIFF, multi-page, OME-TIFF, by random access (geotiff over range reads): the pages
 * are counted from the IFD chain, the first page described, OME-XML read when present; the preview
 * is the middle page, downsampled.
 */
export class TiffReader implements FormatReader {
  private readonly source: BlockSource;
  private tiff: GeoTIFF | undefined;
  private pageStarts: number[] = [];
  private littleEndian = true;
  private ome: OmeInfo | null = null;

  constructor(private readonly context: ReadContext) {
    this.source = new BlockSource(context);
  }

  async readMetadata(): Promise<Metadata> {
    const head = await this.context.read(0, 16);
    const layout =
      tiffLayout(head) ?? fail(`not a TIFF file: no TIFF byte-order mark and magic number${lookLike(head)}`);
    this.pageStarts = await pageOffsets(this.source, layout);
    this.littleEndian = layout.littleEndian;
    this.tiff = await GeoTIFF.fromSource(this.source as never, undefined, this.context.signal);
    const first = await this.page(0);
    await checkDataWithinFile(first, this.context.size);
    const description = await first.getFileDirectory().loadValue('ImageDescription');
    this.ome = typeof description === 'string' && isOmeXml(description) ? parseOmeXml(description) : null;
    return this.metadata(layout, first);
  }

  async preview(): Promise<Buffer | null> {
    const page = await this.page(Math.floor(this.pageStarts.length / 2));
    if (page.getWidth() * page.getHeight() > this.context.limits.maxPixels) return null;
    await checkDataWithinFile(page, this.context.size);
    const size = this.ome?.physical_size;
    return tiffPreview(page, { x: size?.x ?? 1, y: size?.y ?? 1 }, this.context);
  }

  /** Page `index`, opened at its directory's offset (not through geotiff's recursive lookup). */
  private async page(index: number): Promise<GeoTIFFImage> {
    const tiff = this.tiff ?? fail('TIFF page before its metadata');
    const directory = await tiff.parser.parseFileDirectoryAt(this.pageStarts[index] ?? 0);
    return new GeoTIFFImage(directory, this.littleEndian, false, this.source as never);
  }

  private metadata(layout: TiffLayout, first: GeoTIFFImage): Metadata {
    const directory = first.getFileDirectory();
    const samplesPerPixel = first.getSamplesPerPixel();
    const compression = Number(directory.getValue('Compression') ?? 1);
    const photometricValue = directory.getValue('PhotometricInterpretation');
    const photometric = photometricValue === undefined ? undefined : Number(photometricValue);
    const sampleFormat = first.getSampleFormat(0);
    return {
      format: 'tiff',
      bigtiff: layout.bigTiff,
      byte_order: layout.littleEndian ? 'little' : 'big',
      width: first.getWidth(),
      height: first.getHeight(),
      pages: this.pageStarts.length,
      bits_per_sample: first.getBitsPerSample(0),
      samples_per_pixel: samplesPerPixel,
      sample_format: sampleFormatNames.get(sampleFormat) ?? `code ${sampleFormat}`,
      compression: compressionNames.get(compression) ?? `code ${compression}`,
      compression_code: compression,
      photometric:
        photometric === undefined ? null : (photometricNames.get(photometric) ?? `code ${photometric}`),
      tiled: directory.hasTag('TileWidth'),
      ome_xml: this.ome !== null,
      ...(this.ome ? { ome: this.ome } : {}),
    };
  }
}

/** Every strip or tile of a page must lie within the file (a cut-off upload fails here, by name). */
async function checkDataWithinFile(page: GeoTIFFImage, size: number): Promise<void> {
  const directory = page.getFileDirectory();
  const tiled = directory.hasTag('TileOffsets');
  const offsets = (await directory.loadValue(tiled ? 'TileOffsets' : 'StripOffsets')) as
    ArrayLike<number> | undefined;
  const counts = (await directory.loadValue(tiled ? 'TileByteCounts' : 'StripByteCounts')) as
    ArrayLike<number> | undefined;
  if (!offsets || !counts) fail('corrupt TIFF file: a page has no strip or tile offsets');
  for (let index = 0; index < offsets.length; index++) {
    const end = Number(offsets[index] ?? 0) + Number(counts[index] ?? 0);
    if (end > size) fail(`truncated TIFF file: image data runs to byte ${end}, the file has ${size}`);
  }
}

import { type ImageFormat, type SniffedImage, sniffImage } from './sniffImage';

export const INVALID_IMAGE =
  'Upload a valid image. The file you uploaded was either not an image or a corrupted image.';

export interface ImageRules {
  /** Formats the caller accepts (by content, not by name). */
  readonly formats: ReadonlySet<ImageFormat>;
  /** width × height bound: a few KiB of header can announce gigapixels (a decompression bomb). */
  readonly maxPixels: number;
}

export type ImageCheck =
  { readonly ok: true; readonly image: SniffedImage } | { readonly ok: false; readonly message: string };

const FORMAT_NAMES: Readonly<Record<ImageFormat, string>> = {
  png: 'PNG',
  jpeg: 'JPEG',
  gif: 'GIF',
  webp: 'WebP',
  bmp: 'BMP',
  tiff: 'TIFF',
};

function megapixels(pixels: number): string {
  return `${Number((pixels / 1_000_000).toFixed(1))} megapixels`;
}

/** Whether the first bytes of an upload are an acceptable image; when not, a message for the user. */
export function checkImage(head: Buffer, rules: ImageRules): ImageCheck {
  const image = sniffImage(head);
  if (!image) return { ok: false, message: INVALID_IMAGE };
  if (!rules.formats.has(image.format)) {
    const allowed = [...rules.formats].map((f) => FORMAT_NAMES[f]).join(', ');
    return {
      ok: false,
      message: `${FORMAT_NAMES[image.format]} images are not supported. Upload one of: ${allowed}.`,
    };
  }
  const { maxPixels } = rules;
  const pixels = image.width * image.height;
  if (pixels > maxPixels) {
    return {
      ok: false,
      message: `The image is too large: ${image.width}×${image.height} pixels (${megapixels(pixels)}); the limit is ${megapixels(maxPixels)}.`,
    };
  }
  return { ok: true, image };
}

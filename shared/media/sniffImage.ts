import type { Dimensions } from './dimensions';
import { sniffBmp } from './sniffBmp';
import { sniffGif } from './sniffGif';
import { sniffJpeg } from './sniffJpeg';
import { sniffPng } from './sniffPng';
import { sniffTiff } from './sniffTiff';
import { sniffWebp } from './sniffWebp';

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'bmp' | 'tiff';

export interface SniffedImage {
  readonly format: ImageFormat;
  readonly mimeType: string;
  readonly width: number;
  readonly height: number;
}

const SNIFFERS: readonly {
  format: ImageFormat;
  mimeType: string;
  sniff: (head: Buffer) => Dimensions | undefined;
}[] = [
  { format: 'png', mimeType: 'image/png', sniff: sniffPng },
  { format: 'jpeg', mimeType: 'image/jpeg', sniff: sniffJpeg },
  { format: 'gif', mimeType: 'image/gif', sniff: sniffGif },
  { format: 'webp', mimeType: 'image/webp', sniff: sniffWebp },
  { format: 'bmp', mimeType: 'image/bmp', sniff: sniffBmp },
  { format: 'tiff', mimeType: 'image/tiff', sniff: sniffTiff },
];

/**
 * What image the first bytes of a file really are, judged by content alone: the magic number and
 * a header that parses with positive dimensions. File names and client-sent types are claims; a
 * text file renamed .png, a truncated or zero-sized header all give undefined.
 */
export function sniffImage(head: Buffer): SniffedImage | undefined {
  for (const { format, mimeType, sniff } of SNIFFERS) {
    const size = sniff(head);
    if (size) return { format, mimeType, width: size.width, height: size.height };
  }
  return undefined;
}

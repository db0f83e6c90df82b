import { fail } from './formatFailure';
import type { InspectionLimits } from './inspectionLimits';

/**
 * A preview the budget refused before any of it was decoded: what the file declares (a chunk, a
 * strip, a volume) is larger than an inspection may decode. The upload completes with its metadata
 * and this reason instead of a preview; the file itself is not at fault.
 */
export class PreviewSkipped extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PreviewSkipped';
  }
}

/** Headers and directories of a small file may be read several times over without being a bomb. */
const readAllowance = 64 * 2 ** 20;

/**
 * What one inspection may cost in memory and I/O, and what it has spent. Sizes a format declares
 * are checked before anything is allocated or inflated (`allowDecoded`, `allowDecompressing`: over
 * the budget, the preview is skipped); what decoders really produce and what is read from the
 * source is counted as it happens (over the budget, the upload fails: only a file whose data
 * contradicts its own fields gets there).
 */
export class InspectionBudget {
  private decompressed = 0;
  private requested = 0;

  constructor(
    readonly limits: InspectionLimits,
    private readonly sourceSize: number,
  ) {}

  /** Before allocating one buffer of `bytes` (what the format declares). */
  allowDecoded(bytes: number, what: string): void {
    if (!(bytes <= this.limits.maxDecodedBytes)) {
      throw new PreviewSkipped(
        `${what} is larger than the ${size(this.limits.maxDecodedBytes)} an inspection may decode at once`,
      );
    }
  }

  /** Before starting work that will inflate `bytes` in all (what the format declares). */
  allowDecompressing(bytes: number, what: string): void {
    if (!(this.decompressed + bytes <= this.limits.maxDecompressedBytes)) {
      throw new PreviewSkipped(
        `${what} would inflate ${bytes} bytes, more than the ${size(this.limits.maxDecompressedBytes)} an inspection may decompress in all`,
      );
    }
  }

  /** After a decoder produced `bytes`. */
  countDecompressed(bytes: number): void {
    this.decompressed += bytes;
    if (this.decompressed > this.limits.maxDecompressedBytes) {
      fail(
        `decompression bomb: the file inflates past the ${size(this.limits.maxDecompressedBytes)} an inspection may decompress in all`,
      );
    }
  }

  /** Before requesting `bytes` from the source. */
  countRead(bytes: number): void {
    this.requested += bytes;
    const allowed = this.limits.maxReadFactor * this.sourceSize + readAllowance;
    if (this.requested > allowed) {
      fail(
        `the file refers to the same bytes over and over: inspecting it would read more than ${allowed} bytes of a ${this.sourceSize}-byte file`,
      );
    }
  }

  get decompressedBytes(): number {
    return this.decompressed;
  }

  get requestedBytes(): number {
    return this.requested;
  }
}

/** 268435456 -> "256 MiB", 4294967296 -> "4 GiB"; other sizes in bytes. */
function size(bytes: number): string {
  if (bytes >= 2 ** 30 && bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30} GiB`;
  if (bytes >= 2 ** 20 && bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20} MiB`;
  return `${bytes} bytes`;
}

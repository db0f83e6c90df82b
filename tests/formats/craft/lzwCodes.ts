const clearCode = 256;
const endCode = 257;

/**
 * Writes TIFF LZW codes MSB first, widening from 9 to 12 bits exactly when a decoder does
 * ("early change"): it follows the decoder's table size, one entry per code after the first.
 */
class LzwCodeWriter {
  private readonly bytes: number[] = [];
  private bits = 0;
  private bitCount = 0;
  private next = 258;
  private width = 9;
  private first = true;

  emit(code: number): void {
    this.bits = (this.bits << this.width) | code;
    this.bitCount += this.width;
    while (this.bitCount >= 8) {
      this.bytes.push((this.bits >>> (this.bitCount - 8)) & 0xff);
      this.bitCount -= 8;
    }
    this.bits &= (1 << this.bitCount) - 1;
    if (code === clearCode) {
      this.next = 258;
      this.width = 9;
      this.first = true;
      return;
    }
    if (code === endCode) return;
    if (!this.first && this.next < 4096) this.next++;
    this.first = false;
    if (this.next + 1 >= 1 << this.width && this.width < 12) this.width++;
  }

  finish(): Buffer {
    if (this.bitCount > 0) this.bytes.push((this.bits << (8 - this.bitCount)) & 0xff);
    return Buffer.from(this.bytes);
  }
}

/** Standard TIFF LZW of `data` (a clear code whenever the table nears full). */
export function lzwEncode(data: Uint8Array): Buffer {
  const writer = new LzwCodeWriter();
  writer.emit(clearCode);
  let table = new Map<number, number>();
  let next = 258;
  let current = -1;
  for (const byte of data) {
    if (current === -1) {
      current = byte;
      continue;
    }
    const key = current * 256 + byte;
    const known = table.get(key);
    if (known !== undefined) {
      current = known;
      continue;
    }
    writer.emit(current);
    table.set(key, next++);
    current = byte;
    if (next >= 4000) {
      writer.emit(current);
      writer.emit(clearCode);
      table = new Map();
      next = 258;
      current = -1;
    }
  }
  if (current !== -1) writer.emit(current);
  writer.emit(endCode);
  return writer.finish();
}

/**
 * LZW codes that inflate to at least `bytes` zeros: after each clear, code 0 then 258, 259, … each
 * one zero longer than the last (≈ 7 MB per 4 KiB of codes), repeated.
 */
export function lzwZeros(bytes: number): Buffer {
  const writer = new LzwCodeWriter();
  let produced = 0;
  while (produced < bytes) {
    writer.emit(clearCode);
    writer.emit(0);
    produced += 1;
    for (let code = 258, length = 2; code < 4000 && produced < bytes; code++, length++) {
      writer.emit(code);
      produced += length;
    }
  }
  writer.emit(endCode);
  return writer.finish();
}

/** PackBits of `data`: runs of 3 or more as repeats, the rest as literals. */
export function packBitsEncode(data: Uint8Array): Buffer {
  const out: number[] = [];
  let at = 0;
  while (at < data.length) {
    let run = 1;
    while (at + run < data.length && run < 128 && data[at + run] === data[at]) run++;
    if (run >= 3) {
      out.push(257 - run, data[at] ?? 0);
      at += run;
      continue;
    }
    const start = at;
    while (at < data.length && at - start < 128) {
      if (at + 2 < data.length && data[at] === data[at + 1] && data[at] === data[at + 2]) break;
      at++;
    }
    out.push(at - start - 1, ...data.subarray(start, at));
  }
  return Buffer.from(out);
}

/** PackBits that inflates to `bytes` zeros: 2 bytes per 128 (the format's best ratio, 64:1). */
export function packBitsZeros(bytes: number): Buffer {
  const runs = Math.ceil(bytes / 128);
  const out = Buffer.alloc(runs * 2);
  for (let run = 0; run < runs; run++) out[run * 2] = 0x81; // -127: the next byte 128 times
  return out;
}

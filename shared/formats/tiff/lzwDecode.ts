import { fail } from '#shared/formats/formatFailure';

const clearCode = 256;
const endCode = 257;
const maxCodes = 4096;

/**
 * TIFF LZW (MSB-first codes, 9 to 12 bits, "early change" as libtiff writes it) into at most `bound`
 * bytes: output past it is a bomb and fails before anything beyond the bound is allocated.
 */
export function lzwDecode(input: Uint8Array, bound: number, what: string): Uint8Array {
  const out = new Uint8Array(bound);
  const prefix = new Int16Array(maxCodes);
  const suffix = new Uint8Array(maxCodes);
  const lengths = new Int32Array(maxCodes);
  for (let code = 0; code < 256; code++) {
    suffix[code] = code;
    lengths[code] = 1;
    prefix[code] = -1;
  }
  let next = 258;
  let width = 9;
  let previous = -1;
  let written = 0;
  let bitBuffer = 0;
  let bitCount = 0;
  let position = 0;

  const write = (code: number): number => {
    const length = lengths[code] ?? 0;
    if (written + length > bound) fail(`${what}: its LZW data inflates past the ${bound} bytes it may hold`);
    let at = written + length - 1;
    for (let current = code; current >= 0; current = prefix[current] ?? -1) out[at--] = suffix[current] ?? 0;
    written += length;
    return out[written - length] ?? 0;
  };

  for (;;) {
    while (bitCount < width && position < input.length) {
      bitBuffer = ((bitBuffer << 8) | (input[position++] ?? 0)) & 0xffffff;
      bitCount += 8;
    }
    if (bitCount < width) break; // no end code: libtiff accepts a strip that simply stops
    const code = (bitBuffer >>> (bitCount - width)) & ((1 << width) - 1);
    bitCount -= width;
    if (code === endCode) break;
    if (code === clearCode) {
      next = 258;
      width = 9;
      previous = -1;
      continue;
    }
    if (previous === -1) {
      if (code > 255) fail(`${what}: corrupt LZW data (code ${code} after a clear code)`);
      write(code);
      previous = code;
      continue;
    }
    let first: number;
    if (code < next) {
      first = write(code);
    } else if (code === next) {
      first = write(previous);
      if (written + 1 > bound) fail(`${what}: its LZW data inflates past the ${bound} bytes it may hold`);
      out[written++] = first;
    } else {
      return fail(`${what}: corrupt LZW data (code ${code} before it was defined)`);
    }
    if (next < maxCodes) {
      prefix[next] = previous;
      suffix[next] = first;
      lengths[next] = (lengths[previous] ?? 0) + 1;
      next++;
    }
    if (next + 1 >= 1 << width && width < 12) width++;
    previous = code;
  }
  return out.subarray(0, written);
}

import { fail } from '#shared/formats/formatFailure';

/** PackBits (Apple's run-length code) into at most `bound` bytes: a longer output fails. */
export function packBitsDecode(input: Uint8Array, bound: number, what: string): Uint8Array {
  const out = new Uint8Array(bound);
  let written = 0;
  let position = 0;
  const overflow = (): never =>
    fail(`${what}: its PackBits data inflates past the ${bound} bytes it may hold`);
  while (position < input.length) {
    const header = ((input[position++] ?? 0) << 24) >> 24;
    if (header >= 0) {
      const count = header + 1;
      if (written + count > bound) overflow();
      out.set(input.subarray(position, position + count), written);
      written += count;
      position += count;
    } else if (header !== -128) {
      const count = 1 - header;
      if (written + count > bound) overflow();
      out.fill(input[position++] ?? 0, written, written + count);
      written += count;
    }
  }
  return out.subarray(0, written);
}

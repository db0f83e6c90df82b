/**
 * What a file's first bytes look like, to say so when they do not match its extension
 * ("not a NIfTI file: bad sizeof_hdr 18761; the bytes look like a TIFF file").
 */
export function sniffFormat(head: Buffer): string | undefined {
  if (head.length >= 4) {
    const magic = head.readUInt32BE(0);
    if (magic === 0x49492a00 || magic === 0x4d4d002a) return 'a TIFF file';
    if (magic === 0x49492b00 || magic === 0x4d4d002b) return 'a BigTIFF file';
    if (magic === 0x504b0304 || magic === 0x504b0506) return 'a zip archive';
    if (magic === 0x89504e47) return 'a PNG image';
  }
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip data';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) {
    return 'a JPEG image';
  }
  if (head.length >= 4 && isNiftiSize(head)) return 'a NIfTI file';
  return undefined;
}

function isNiftiSize(head: Buffer): boolean {
  return [348, 540].some((size) => head.readInt32LE(0) === size || head.readInt32BE(0) === size);
}

/** "; the bytes look like X" when they look like something recognisable, else "". */
export function lookLike(head: Buffer): string {
  const what = sniffFormat(head);
  return what ? `; the bytes look like ${what}` : '';
}

/** Compression codes, named as tifffile's COMPRESSION enum names them (lower case). */
export const compressionNames: ReadonlyMap<number, string> = new Map([
  [1, 'none'],
  [2, 'ccittrle'],
  [3, 'ccitt_t4'],
  [4, 'ccitt_t6'],
  [5, 'lzw'],
  [6, 'ojpeg'],
  [7, 'jpeg'],
  [8, 'adobe_deflate'],
  [32773, 'packbits'],
  [32946, 'deflate'],
  [34712, 'jpeg2000'],
  [34887, 'lerc'],
  [34925, 'lzma'],
  [50000, 'zstd'],
  [50001, 'webp'],
]);

/** PhotometricInterpretation codes (tifffile's PHOTOMETRIC names). */
export const photometricNames: ReadonlyMap<number, string> = new Map([
  [0, 'miniswhite'],
  [1, 'minisblack'],
  [2, 'rgb'],
  [3, 'palette'],
  [4, 'mask'],
  [5, 'separated'],
  [6, 'ycbcr'],
  [8, 'cielab'],
]);

/** SampleFormat codes. */
export const sampleFormatNames: ReadonlyMap<number, string> = new Map([
  [1, 'uint'],
  [2, 'int'],
  [3, 'ieeefp'],
  [4, 'void'],
  [5, 'complexint'],
  [6, 'complexieeefp'],
]);

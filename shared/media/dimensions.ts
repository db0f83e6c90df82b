export interface Dimensions {
  readonly width: number;
  readonly height: number;
}

/** Zero, negative or non-integer dimensions mean a damaged or forged header, not an image. */
export function dimensions(width: number, height: number): Dimensions | undefined {
  const valid = Number.isSafeInteger(width) && Number.isSafeInteger(height) && width > 0 && height > 0;
  return valid ? { width, height } : undefined;
}

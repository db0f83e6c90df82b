/** An inclusive byte range, as BlobStore.get takes it. */
export interface ByteRange {
  readonly start: number;
  readonly end?: number;
}

export function assertValidRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0) throw new RangeError(`invalid range start ${start}`);
  if (end !== undefined && (!Number.isSafeInteger(end) || end < start)) {
    throw new RangeError(`invalid range end ${end} for start ${start}`);
  }
}

/** A range must start inside the blob; its end is clamped to the last byte, as HTTP and S3 do. */
export function rangeNotSatisfiable(range: ByteRange, size?: number): RangeError {
  const blob = size === undefined ? 'the blob' : `a blob of ${size} bytes`;
  return new RangeError(`range starting at ${range.start} is outside ${blob}`);
}

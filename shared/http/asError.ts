/** Promise rejections and throws carry Errors; wrap the odd library value that is not one. */
export function asError(value: unknown): Error {
  return value instanceof Error
    ? value
    : new Error(typeof value === 'string' ? value : JSON.stringify(value));
}

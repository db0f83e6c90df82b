/** Promise rejections and throws carry Errors; wrap the odd library value that is not one. */
export function asError(value: unknown): Error {
  return value instanceof Error
    ? value
    : // The cause keeps what classifiers look at (a code, a SQLSTATE) on an error from another realm.
      new Error(typeof value === 'string' ? value : JSON.stringify(value), { cause: value });
}

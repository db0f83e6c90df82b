/**
 * An expected failure of the content (corrupt, truncated, mislabeled, over a limit): inspectUpload
 * resolves it as `{ ok: false, reason }`. Anything the source itself throws is not one of these.
 */
export class FormatFailure extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'FormatFailure';
  }
}

export function fail(reason: string): never {
  throw new FormatFailure(reason);
}

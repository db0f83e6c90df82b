/** Integer ids below this index a typed array (4 bytes each, up to 64 MiB a resource type). */
const MAX_DENSE_ID = 1 << 24;

/**
 * The last public revision of resources, by type and id, kept for a catch-up's every resource: an
 * integer id (every resource's but tokens' and uploads') indexes a typed array of its type, with no
 * hashing; any other id is a map's key. A map of "type:id" strings cost more than the rest of an
 * event's row.
 */
export class ResourceRevisions {
  /** Revision + 1 by id (0: none), per resource type. */
  private readonly dense = new Map<string, Int32Array>();
  private readonly sparse = new Map<string, number>();
  /** Resources with a revision. */
  size = 0;

  get(type: string, id: string): number | undefined {
    const n = denseId(id);
    if (n < 0) return this.sparse.get(`${type}:${id}`);
    const revisions = this.dense.get(type);
    const stored = revisions && n < revisions.length ? revisions[n]! : 0;
    return stored === 0 ? undefined : stored - 1;
  }

  set(type: string, id: string, revision: number): void {
    const n = denseId(id);
    if (n < 0) {
      const key = `${type}:${id}`;
      if (!this.sparse.has(key)) this.size++;
      this.sparse.set(key, revision);
      return;
    }
    let revisions = this.dense.get(type);
    if (!revisions || n >= revisions.length) {
      const grown = new Int32Array(Math.max(1024, 2 ** Math.ceil(Math.log2(n + 1))));
      if (revisions) grown.set(revisions);
      this.dense.set(type, (revisions = grown));
    }
    if (revisions[n] === 0) this.size++;
    revisions[n] = revision + 1;
  }

  /** The resource's next revision (0 for its first event), remembered as its last. */
  next(type: string, id: string): number {
    const revision = (this.get(type, id) ?? -1) + 1;
    this.set(type, id, revision);
    return revision;
  }
}

/** The id as an integer when it is one written plainly (no sign, no leading zero) below MAX_DENSE_ID, else -1. */
function denseId(id: string): number {
  const length = id.length;
  if (length === 0 || length > 8 || (length > 1 && id.charCodeAt(0) === 0x30)) return -1;
  let n = 0;
  for (let i = 0; i < length; i++) {
    const digit = id.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    n = n * 10 + digit;
  }
  return n < MAX_DENSE_ID ? n : -1;
}

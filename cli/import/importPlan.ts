/** One scan to import: a file and the brain it becomes. */
export interface PlannedScan {
  /** Absolute path of the file. */
  readonly file: string;
  /** Path relative to the import's root, with forward slashes (what the key and the state name). */
  readonly relativePath: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** The create request's text fields (name, atlas or category, and the optional ones). */
  readonly fields: Readonly<Record<string, string | undefined>>;
  /** A BIDS JSON sidecar, sent as `sidecar` (merged into the upload's metadata). */
  readonly sidecar?: Readonly<Record<string, unknown>>;
}

/** A problem found before anything is sent: the row (manifest line, else 0), the column, the message. */
export interface PlanIssue {
  readonly row: number;
  readonly file?: string;
  readonly column: string;
  readonly message: string;
}

export interface ImportPlan {
  readonly kind: 'folder' | 'manifest' | 'bids';
  /** The directory relative paths are taken from (the folder, the manifest's folder, the dataset). */
  readonly root: string;
  /** What makes this dataset's keys its own (the BIDS dataset's name, the folder's name). */
  readonly identity: string;
  readonly scans: readonly PlannedScan[];
  readonly issues: readonly PlanIssue[];
}

/** The options a folder, a manifest and a dataset share (the command's flags). */
export interface ImportDefaults {
  readonly atlas?: string;
  readonly category?: string;
  readonly species?: string;
  readonly visibility?: string;
  readonly embargoUntil?: string;
  readonly description?: string;
}

/** visibility and embargo_until as create takes them: an embargo date alone means embargoed. */
export function visibilityFields(
  visibility: string | undefined,
  embargoUntil: string | undefined,
): { visibility?: string; embargo_until?: string } {
  if (embargoUntil !== undefined)
    return { visibility: visibility ?? 'embargoed', embargo_until: embargoUntil };
  return { visibility };
}

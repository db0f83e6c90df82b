/**
 * A BIDS JSON sidecar: what a scan's `.json` beside it says (RepetitionTime, EchoTime, ...). Kept
 * with the upload as given and merged into its metadata once processing has read the file: the
 * values read from the file win a clash, and `sidecar_keys` names the keys that came from the
 * sidecar so a reader can tell them apart. The events hold the two apart (the sidecar in
 * UploadReceived or UploadAttachedToBrain, the extracted values in UploadProcessingCompleted); this
 * merge is the one rule the state, the read model and the replays apply.
 */
export type BidsSidecar = Readonly<Record<string, unknown>>;

/** Serialised as JSON, at most this many bytes (UTF-8). */
export const MAX_SIDECAR_BYTES = 64 * 1024;

export const SIDECAR_KEYS = 'sidecar_keys';

/** A sidecar as a request sent it (JSON text in a form, an object in JSON); an error message when invalid. */
export function parseSidecar(value: unknown): { sidecar: BidsSidecar } | { error: string } {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return { error: 'Enter a JSON object (the BIDS sidecar): this is not valid JSON.' };
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { error: 'Enter a JSON object (the BIDS sidecar), not an array or a single value.' };
  const bytes = Buffer.byteLength(JSON.stringify(parsed), 'utf8');
  if (bytes > MAX_SIDECAR_BYTES)
    return { error: `The sidecar is ${bytes} bytes as JSON; at most ${MAX_SIDECAR_BYTES} are accepted.` };
  return { sidecar: parsed as BidsSidecar };
}

/** The sidecar an upload has after a second one is given (at attach): its keys win. */
export function combinedSidecar(
  current: BidsSidecar | null | undefined,
  added: BidsSidecar | null | undefined,
): BidsSidecar | null {
  if (!added || Object.keys(added).length === 0) return current ?? null;
  return { ...(current ?? {}), ...added };
}

/** metadata = { ...sidecar, ...extracted, sidecar_keys }; the extracted values alone without a sidecar. */
export function metadataWithSidecar(
  extracted: Readonly<Record<string, unknown>>,
  sidecar: BidsSidecar | null | undefined,
): Readonly<Record<string, unknown>> {
  if (!sidecar || Object.keys(sidecar).length === 0) return extracted;
  return { ...sidecar, ...extracted, [SIDECAR_KEYS]: Object.keys(sidecar).sort() };
}

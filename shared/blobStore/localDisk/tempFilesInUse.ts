/**
 * Temp files that puts of this thread are writing. The sweep never takes one of them for a
 * leftover, however long its client stalls; temp files of other processes sharing the directory
 * are told apart by their age only.
 */
const inUse = new Set<string>();

export function markTempFilesInUse(files: readonly string[]): () => void {
  for (const file of files) inUse.add(file);
  return () => {
    for (const file of files) inUse.delete(file);
  };
}

export function isTempFileInUse(file: string): boolean {
  return inUse.has(file);
}

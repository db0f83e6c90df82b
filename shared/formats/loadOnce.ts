/**
 * `load` run once, its promise shared by every caller; a load that fails is forgotten, so the next
 * call tries again. For a module imported on first use (an `import()` per call goes through the
 * module loader each time: resolution, and a round trip to the loader's thread where hooks are
 * registered): the format readers' libraries that are ESM only.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    }));
}

import { setFlagsFromString } from 'node:v8';

/** The old generation may grow to (1 + this / 100) times what survived the last full collection. */
export const HEAP_GROWING_PERCENT = 200;
const FLAG = '--heap-growing-percent';

/**
 * Gives the old generation room for the external memory a busy HTTP server allocates, unless the
 * operator set the flag (node option or NODE_OPTIONS).
 *
 * Node's HTTP parser copies every received body chunk into fresh memory outside the JavaScript
 * heap (64 KiB per socket read: a GiB per GiB uploaded). V8 counts external memory allocated since
 * the last full collection against the old generation's limit, and its default limit leaves about
 * 0.8 times the live heap free: with a 30 MB live heap, every ~23 MB received started a full
 * marking of the heap, back to back during an upload. Measured on a 2-core machine (3 x 1 GiB
 * uploads): 22 to 101 full collections and 0.3 to 1.4 CPU-seconds per GiB in the collector's
 * threads, against 1 to 3 collections with the limit at 3 times the live heap. The scavenger
 * frees those chunks long before they could fill the room they are given.
 */
export function tuneHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): boolean {
  if ([...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => arg.replace(/_/g, '-').startsWith(FLAG)))
    return false;
  setFlagsFromString(`${FLAG}=${HEAP_GROWING_PERCENT}`);
  return true;
}

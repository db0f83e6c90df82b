import { scrypt } from 'node:crypto';

/** glibc's malloc settings an operator may give in the environment (then left as they are). */
const MALLOC_SETTINGS = /\bglibc\.malloc\.(trim_threshold|mmap_threshold|top_pad)\b/;
const MALLOC_VARIABLES = ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TOP_PAD_'];

/**
 * scrypt's working memory for N = 2^14, r = 15 (128 · r · (N + 2) bytes, 30 MiB): one malloc,
 * freed before scrypt calls back. At most 32 MiB, the largest block glibc adjusts its thresholds to.
 */
const SCRYPT_COST = { N: 2 ** 14, r: 15, p: 1 } as const;

/**
 * Lets glibc keep the heap memory the process frees for its next allocations, instead of handing it
 * back to the kernel at once, unless the operator set glibc's malloc thresholds (GLIBC_TUNABLES,
 * MALLOC_*_). Linux with glibc only; elsewhere it does nothing.
 *
 * Node's HTTP parser copies every received body chunk (64 KiB per socket read) into memory it
 * mallocs, freed in bursts as the garbage collector finds the chunks dead. With glibc's default
 * trim threshold (128 KiB) each burst that ends at the top of the heap is returned to the kernel
 * (brk), and the next chunks are copied into pages the kernel must hand out and zero again: in a
 * 1 GiB tus PATCH, ~1,500 brk calls and 30,000 to 67,000 page faults, 0.7 to 1.5 CPU-seconds per
 * GiB on this VM (the copy in the parser was the largest item of the server's profile). glibc
 * raises its thresholds by itself when the program frees a block it had mapped (mallopt(3): the
 * mmap threshold to the block's size, the trim threshold to twice that, for the whole process):
 * scrypt's working memory is such a block, so one key derivation at start-up, on the thread pool
 * (0.1 to 0.4 CPU-seconds, none of them the event loop's), sets the trim threshold to ~60 MiB,
 * and the same PATCH then takes about 1,000 to 3,000 page faults.
 *
 * The cost: up to ~60 MiB of freed memory may stay with the process, and blocks below ~30 MiB come
 * from the heap rather than their own mapping: what glibc does anyway in any process that once
 * frees a large block.
 */
export async function keepFreedHeapMemory(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (process.platform !== 'linux' || !runsOnGlibc()) return false;
  if (
    MALLOC_SETTINGS.test(env.GLIBC_TUNABLES ?? '') ||
    MALLOC_VARIABLES.some((name) => env[name] !== undefined)
  )
    return false;
  return new Promise((resolve) => scrypt('', '', 1, SCRYPT_COST, (error) => resolve(!error)));
}

function runsOnGlibc(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return typeof report?.header?.glibcVersionRuntime === 'string';
}

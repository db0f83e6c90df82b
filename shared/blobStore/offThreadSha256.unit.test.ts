import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor } from '#tests/support/waitFor';
import {
  BATCH_BYTES,
  OffThreadFileWrite,
  OffThreadSha256,
  directWritable,
  sharedBatchBytes,
} from './offThreadSha256';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Hands `data` over in batches of `size` bytes (at most BATCH_BYTES), each filled in two parts. */
async function updateAll(hash: OffThreadSha256, data: Buffer, size: number): Promise<void> {
  for (let at = 0; at < data.length; at += size) {
    const part = data.subarray(at, Math.min(data.length, at + size));
    const batch = hash.batch();
    const half = Math.floor(part.length / 2);
    part.subarray(0, half).copy(batch, 0);
    part.subarray(half).copy(batch, half);
    await hash.update(batch.subarray(0, part.length));
  }
}

test('hashes batches on the other thread exactly as createHash does, for any split', async () => {
  const data = randomBytes(5 * BATCH_BYTES + 123);
  for (const size of [4096, 65_536, BATCH_BYTES - 7, BATCH_BYTES]) {
    const hash = new OffThreadSha256();
    await updateAll(hash, data, size);
    expect(await hash.digest()).toBe(sha256(data));
  }
});

test('nothing handed over is the hash of nothing; sessions run side by side', async () => {
  const [a, b, empty] = [new OffThreadSha256(), new OffThreadSha256(), new OffThreadSha256()];
  const x = randomBytes(100_000);
  const y = randomBytes(3 * BATCH_BYTES + 1);
  await Promise.all([updateAll(a, x, BATCH_BYTES), updateAll(b, y, BATCH_BYTES)]);
  expect(await Promise.all([a.digest(), b.digest(), empty.digest()])).toEqual([
    sha256(x),
    sha256(y),
    sha256(Buffer.alloc(0)),
  ]);
});

test('a batch is handed over once, by the session that gave it, and only from its start', async () => {
  const hash = new OffThreadSha256();
  const other = new OffThreadSha256();
  const batch = hash.batch();
  batch.write('abc');
  await hash.update(batch.subarray(0, 3));
  await expect(hash.update(batch.subarray(0, 3))).rejects.toThrow('a batch its session gave, once');
  await expect(hash.update(other.batch())).rejects.toThrow('a batch its session gave, once');
  await expect(hash.update(hash.batch().subarray(1, 2))).rejects.toThrow('a batch its session gave, once');
  await expect(hash.update(Buffer.from('not batch memory'))).rejects.toThrow(
    'a batch its session gave, once',
  );
  expect(await hash.digest()).toBe(sha256(Buffer.from('abc')));
  other.abort();
});

test('an aborted session can no longer be used, and others go on', async () => {
  const aborted = new OffThreadSha256();
  const other = new OffThreadSha256();
  await updateAll(aborted, Buffer.from('partial'), BATCH_BYTES);
  aborted.abort();
  await expect(aborted.digest()).rejects.toThrow('after digest or abort');
  expect(() => aborted.batch()).toThrow('after digest or abort');
  await updateAll(other, Buffer.from('whole'), BATCH_BYTES);
  expect(await other.digest()).toBe(sha256(Buffer.from('whole')));
});

test('batch memory comes back once hashed, and is given again (nothing is allocated per batch)', async () => {
  const hash = new OffThreadSha256();
  const first = hash.batch();
  await hash.update(first.subarray(0, 10));
  expect(await hash.digest()).toBe(sha256(first.subarray(0, 10)));
  const next = new OffThreadSha256();
  const again = [next.batch(), next.batch()];
  expect(again.some((batch) => batch.buffer === first.buffer && batch.byteOffset === first.byteOffset)).toBe(
    true,
  );
  next.abort();
});

test('batches given and never handed over come back when their session ends; memory beyond the first arena is let go', async () => {
  const warm = new OffThreadSha256();
  warm.batch();
  warm.abort();
  const kept = sharedBatchBytes();
  expect(kept).toBeGreaterThan(0);
  for (const end of ['abort', 'digest'] as const) {
    const hash = new OffThreadSha256();
    // More than one arena holds, given out at once (as an upload failing mid-way holds its batches).
    const batches = Array.from({ length: 40 }, () => hash.batch());
    const memories = [...new Set(batches.map((batch) => batch.buffer))];
    const places = new Set(batches.map((batch) => `${memories.indexOf(batch.buffer)}:${batch.byteOffset}`));
    expect(places.size).toBe(40); // no two share memory
    expect(sharedBatchBytes()).toBeGreaterThan(kept);
    if (end === 'abort') hash.abort();
    else await hash.digest();
    expect(sharedBatchBytes()).toBe(kept);
  }
  // Every batch is free again: a new session is given the first arena's memory.
  const after = new OffThreadSha256();
  expect(after.batch().byteOffset % BATCH_BYTES).toBe(0);
  after.abort();
});

test('a whole batch starts on a page and may be written with O_DIRECT; a short one or other memory may not', () => {
  const hash = new OffThreadSha256();
  const batch = hash.batch();
  expect(batch.length).toBe(BATCH_BYTES);
  // Shared WebAssembly memory is what gives page alignment; node has it unless run --jitless.
  expect(directWritable(batch)).toBe(true);
  expect(directWritable(batch.subarray(0, 8192))).toBe(true);
  expect(directWritable(batch.subarray(0, 1000))).toBe(false);
  expect(directWritable(Buffer.alloc(BATCH_BYTES))).toBe(false);
  hash.abort();
});

describe('OffThreadFileWrite', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'off-thread-write-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes `data` from `from` in batches of `size` bytes (the first `first`), each filled in two parts. */
  async function writeAll(
    write: OffThreadFileWrite,
    data: Buffer,
    from: number,
    sizes: number[],
  ): Promise<void> {
    let at = 0;
    for (let i = 0; at < data.length; i += 1) {
      const part = data.subarray(at, Math.min(data.length, at + (sizes[i] ?? sizes.at(-1)!)));
      const batch = write.batch();
      part.copy(batch, 0);
      await write.write(batch.subarray(0, part.length), from + at);
      at += part.length;
    }
  }

  test.each([true, false])(
    'writes the batches in order at their positions (O_DIRECT %s) and hashes them into each session',
    async (withDirect) => {
      const file = path.join(dir, 'file');
      const head = randomBytes(3);
      writeFileSync(file, head);
      const fd = openSync(file, 'r+');
      const directFd = withDirect ? openSync(file, constants.O_WRONLY | constants.O_DIRECT) : undefined;
      try {
        const data = randomBytes(5 * BATCH_BYTES + 12_345);
        const [sha, md5] = [new OffThreadSha256(), new OffThreadSha256('md5')];
        const write = new OffThreadFileWrite(fd, directFd, [sha, md5]);
        // An unaligned start, then whole batches from an aligned position, then a short last one.
        await writeAll(write, data, head.length, [4096 - head.length, BATCH_BYTES]);
        expect(await write.finish()).toBe(data.length);
        expect(readFileSync(file).equals(Buffer.concat([head, data]))).toBe(true);
        expect(await sha.digest()).toBe(sha256(data));
        expect(await md5.digest()).toBe(createHash('md5').update(data).digest('hex'));
      } finally {
        closeSync(fd);
        if (directFd !== undefined) closeSync(directFd);
      }
    },
  );

  test('nothing handed over: finish resolves with 0 and the file is untouched', async () => {
    const file = path.join(dir, 'empty');
    writeFileSync(file, 'x');
    const fd = openSync(file, 'r+');
    try {
      const write = new OffThreadFileWrite(fd, undefined);
      write.batch(); // given, never handed over: free again once finished
      expect(await write.finish()).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe('x');
      expect(() => write.batch()).toThrow('used after finish');
    } finally {
      closeSync(fd);
    }
  });

  test('a batch of another session is refused', () => {
    const file = path.join(dir, 'refused');
    writeFileSync(file, '');
    const fd = openSync(file, 'r+');
    const hash = new OffThreadSha256();
    const write = new OffThreadFileWrite(fd, undefined, [hash]);
    try {
      return expect(write.write(hash.batch(), 0)).rejects.toThrow('a batch its session gave, once');
    } finally {
      void write.finish().finally(() => closeSync(fd));
      hash.abort();
    }
  });

  (existsSync('/dev/full') ? test : test.skip)(
    'a write failing midway: the bytes before it stay, nothing after it is written, finish rejects with its error, and the thread goes on',
    async () => {
      const file = path.join(dir, 'failing');
      writeFileSync(file, '');
      const fd = openSync(file, 'r+');
      try {
        const data = randomBytes(2 * BATCH_BYTES);
        const hash = new OffThreadSha256();
        const write = new OffThreadFileWrite(fd, undefined, [hash]);
        await writeAll(write, data, 0, [BATCH_BYTES]);
        await waitFor('the first batches written', () => statSync(file).size === data.length);
        // The disk fills up: the descriptor now writes to /dev/full (ENOSPC), as a full disk does.
        takeDescriptorFor(fd, '/dev/full');
        const more = write.batch();
        more.fill(1);
        await write.write(more, data.length).catch(() => undefined);
        await expect(write.finish()).rejects.toMatchObject({ code: 'ENOSPC' });
        expect(statSync(file).size).toBe(data.length);
        expect(readFileSync(file).equals(data)).toBe(true);
        hash.abort();
        // The thread still writes and hashes for others.
        const other = path.join(dir, 'other');
        writeFileSync(other, '');
        const otherFd = openSync(other, 'r+');
        try {
          const next = new OffThreadSha256();
          const ok = new OffThreadFileWrite(otherFd, undefined, [next]);
          await writeAll(ok, data, 0, [BATCH_BYTES]);
          expect(await ok.finish()).toBe(data.length);
          expect(await next.digest()).toBe(sha256(data));
        } finally {
          closeSync(otherFd);
        }
      } finally {
        closeSync(fd);
      }
    },
  );
});

/**
 * Closes descriptor `fd` and opens `target` under the same number (the lowest free one is always
 * taken, so lower free ones are taken and let go again): a file that starts failing under a
 * writer's open descriptor.
 */
function takeDescriptorFor(fd: number, target: string): void {
  closeSync(fd);
  const lower: number[] = [];
  try {
    for (;;) {
      const next = openSync(target, 'w');
      if (next === fd) return;
      lower.push(next);
      if (next > fd || lower.length > 10_000) throw new Error(`descriptor ${fd} was taken by another open`);
    }
  } finally {
    lower.forEach((each) => closeSync(each));
  }
}

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { scratchDir } from '#tests/support/scratchDir';
import { ApiClient } from '#cli/api/apiClient';
import type { CliContext } from '#cli/context';
import { downloadFile } from '#cli/transfer/downloadFile';

/** A file server that honours a single `Range` with `If-Range`, as RFC 9110 says. */
function rangeServer(content: () => Buffer) {
  const requests: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.headers);
    const bytes = content();
    const etag = `"${createHash('sha256').update(bytes).digest('hex')}"`;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const rangeApplies = range && (req.headers['if-range'] === undefined || req.headers['if-range'] === etag);
    const headers = { ETag: etag, 'Content-Disposition': 'attachment; filename="scan.nii"' };
    if (!rangeApplies)
      return void res.writeHead(200, { ...headers, 'Content-Length': bytes.length }).end(bytes);
    const start = Number(range[1]);
    if (start >= bytes.length)
      return void res.writeHead(416, { ...headers, 'Content-Range': `bytes */${bytes.length}` }).end();
    res
      .writeHead(206, {
        ...headers,
        'Content-Length': bytes.length - start,
        'Content-Range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
      })
      .end(bytes.subarray(start));
  });
  return { server, requests };
}

let current = randomBytes(300_000);
const { server, requests } = rangeServer(() => current);
let ctx: CliContext;
const etagOf = (bytes: Buffer) => `"${createHash('sha256').update(bytes).digest('hex')}"`;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ctx = {
    interactive: false,
    api: new ApiClient({ server: url, token: undefined, notice: () => undefined, userAgent: 'test' }),
  } as unknown as CliContext;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests.length = 0;
  current = randomBytes(300_000);
});

const partialIn = (bytes: Buffer, etag: string) => {
  const target = path.join(scratchDir('bic-dl-'), 'scan.nii');
  writeFileSync(`${target}.part`, bytes);
  writeFileSync(`${target}.part.json`, JSON.stringify({ etag }));
  return target;
};

describe('downloadFile', () => {
  it('appends the 206 of a resumed download and verifies the whole file', async () => {
    const target = partialIn(current.subarray(0, 100_000), etagOf(current));
    const result = await downloadFile(ctx, '/file/', { output: target, fallbackName: 'x' });
    expect(result).toMatchObject({ bytes: current.length, resumedFrom: 100_000, verified: true });
    expect(requests[0]).toMatchObject({ range: 'bytes=100000-', 'if-range': etagOf(current) });
    expect(readFileSync(target).equals(current)).toBe(true);
    expect(existsSync(`${target}.part`) || existsSync(`${target}.part.json`)).toBe(false);
  });

  it('starts over when the content changed since the partial bytes (If-Range answered with 200)', async () => {
    const old = randomBytes(300_000);
    const target = partialIn(old.subarray(0, 100_000), etagOf(old));
    const result = await downloadFile(ctx, '/file/', { output: target, fallbackName: 'x' });
    expect(result).toMatchObject({ resumedFrom: 0, verified: true });
    expect(readFileSync(target).equals(current)).toBe(true);
  });

  it('a partial file as long as the content (416) is fetched again whole', async () => {
    const target = partialIn(Buffer.concat([current, Buffer.from('junk')]), etagOf(current));
    await downloadFile(ctx, '/file/', { output: target, fallbackName: 'x' });
    expect(requests.map((r) => r.range)).toEqual([`bytes=${current.length + 4}-`, undefined]);
    expect(readFileSync(target).equals(current)).toBe(true);
  });

  it('without -o, resumes the partial file of the name the server offers', async () => {
    const dir = scratchDir('bic-dl-');
    writeFileSync(path.join(dir, 'scan.nii.part'), current.subarray(0, 5000));
    writeFileSync(path.join(dir, 'scan.nii.part.json'), JSON.stringify({ etag: etagOf(current) }));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const result = await downloadFile(ctx, '/file/', { fallbackName: 'x' });
      expect(result).toMatchObject({ file: path.join(dir, 'scan.nii'), resumedFrom: 5000 });
    } finally {
      process.chdir(cwd);
    }
    expect(readFileSync(path.join(dir, 'scan.nii')).equals(current)).toBe(true);
  });

  it('a target in a directory that cannot be written: one line, exit code 1, nothing fetched', async () => {
    await expect(
      downloadFile(ctx, '/file/', { output: '/nonexistent-dir/scan.nii', fallbackName: 'x' }),
    ).rejects.toMatchObject({ message: 'cannot write to /nonexistent-dir', exitCode: 1 });
    expect(requests).toHaveLength(0);
  });
});

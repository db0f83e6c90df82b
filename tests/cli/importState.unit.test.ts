import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ImportState, type ScanRecord } from '#cli/import/importState';

const record = (n: number, more: Partial<ScanRecord> = {}): ScanRecord => ({
  key: `key-${n}`,
  identity: 'dataset',
  path: `sub-${n}/scan.nii`,
  size: 100 + n,
  mtime_ms: 1000 + n,
  at: '2024-01-01T00:00:00.000Z',
  ...more,
});

describe('ImportState', () => {
  let configDir: string;
  beforeEach(() => {
    configDir = path.join(mkdtempSync(path.join(tmpdir(), 'import-state-')), 'config');
  });
  afterEach(() => rmSync(path.dirname(configDir), { recursive: true, force: true }));

  const lines = (state: ImportState): ScanRecord[] =>
    readFileSync(state.file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ScanRecord);

  it('each record is one whole line on disk when record() resolves, in the order given', async () => {
    const state = await ImportState.open(configDir, 'http://server', 1);
    expect(state.file.startsWith(path.join(configDir, 'imports'))).toBe(true);
    await state.record(record(1, { upload: 'u-1' }));
    expect(lines(state)).toEqual([record(1, { upload: 'u-1' })]);
    // Many at once (an import's jobs): serialised, none torn or interleaved.
    const big = 'x'.repeat(100_000);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => state.record(record(i + 2, { readable_id: `${i}-${big}` }))),
    );
    expect(lines(state).map((r) => r.key)).toEqual(Array.from({ length: 51 }, (_, i) => `key-${i + 1}`));
    await state.close();
    expect(statSync(state.file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(state.file)).mode & 0o777).toBe(0o700);
  });

  it('read back by a later run (done by key and by file) and appended to; a torn last line ignored', async () => {
    const first = await ImportState.open(configDir, 'http://server', 1);
    await first.record(record(1, { upload: 'u-1' }));
    await first.record(record(1, { upload: 'u-1', brain_id: 11, readable_id: 'scan-11' }));
    await first.record(record(2));
    await first.close();

    const second = await ImportState.open(configDir, 'http://server', 1);
    expect(second.file).toBe(first.file);
    expect(second.get('key-1')).toMatchObject({ brain_id: 11, upload: 'u-1' });
    expect(second.doneByFile('dataset', 'sub-1/scan.nii', 101, 1001)?.brain_id).toBe(11);
    expect(second.doneByFile('dataset', 'sub-2/scan.nii', 102, 1002)).toBeUndefined(); // no brain yet
    await second.record(record(2, { brain_id: 12 }));
    await second.close();
    appendFileSync(first.file, '{"key":"key-3","ident'); // a run killed mid-line

    const third = await ImportState.open(configDir, 'http://server', 1);
    expect(third.get('key-2')?.brain_id).toBe(12);
    expect(third.get('key-1')?.brain_id).toBe(11);
    expect(third.get('key-3')).toBeUndefined();
    await third.close();
    // Another user or server: another file.
    expect((await ImportState.open(configDir, 'http://server', 2)).file).not.toBe(first.file);
  });

  it('close() without a record writes nothing; a record after close() opens the file again', async () => {
    const state = await ImportState.open(configDir, 'http://server', 1);
    await state.close();
    expect(() => statSync(state.file)).toThrow();
    await state.record(record(1));
    await state.close();
    await state.close();
    await state.record(record(2));
    await state.close();
    expect(lines(state).map((r) => r.key)).toEqual(['key-1', 'key-2']);
  });

  it('a state file that cannot be written: record() and close() reject, as before', async () => {
    const state = await ImportState.open(configDir, 'http://server', 1);
    mkdirSync(path.dirname(state.file), { recursive: true });
    symlinkSync(path.join(configDir, 'no-such-dir', 'state.jsonl'), state.file); // a dangling link
    await expect(state.record(record(1))).rejects.toThrow(/ENOENT/);
    await expect(state.record(record(2))).rejects.toThrow(/ENOENT/);
    await expect(state.close()).rejects.toThrow(/ENOENT/);
  });
});

import { type HistoryEntry, renderHistory } from '#cli/commands/historyCommands';

const entry = (over: Partial<HistoryEntry>): HistoryEntry => ({
  position: '1.1',
  type: 'BrainUpdated',
  resource: { type: 'brain', id: 42 },
  recorded_at: '2026-01-31T12:00:05.123Z',
  actor: { id: 7, username: 'ana' },
  request_id: null,
  changes: {},
  ...over,
});

test('one line per event, one per changed field: a create as values, a change as before → after', () => {
  const text = renderHistory([
    entry({ type: 'BrainCreated', changes: { id: [null, 42], name: [null, 'Mouse'] } }),
    entry({ changes: { name: ['Mouse', 'Rat'], verified: [false, true] } }),
    entry({ changes: { atlas: [null, 3] } }),
    entry({
      type: 'UploadProcessingStarted',
      resource: { type: 'file_upload', id: '3f2a9c1e-0000-4000-8000-000000000000' },
      actor: null,
    }),
  ]);
  expect(text.split('\n')).toEqual([
    '2026-01-31 12:00:05Z  ana  BrainCreated  brain 42',
    '    id = 42',
    '    name = "Mouse"',
    '2026-01-31 12:00:05Z  ana  BrainUpdated  brain 42',
    '    name: "Mouse" → "Rat"',
    '    verified: false → true',
    '2026-01-31 12:00:05Z  ana  BrainUpdated  brain 42',
    '    atlas: null → 3',
    '2026-01-31 12:00:05Z  system  UploadProcessingStarted  file_upload 3f2a9c1e…',
    '    (no change to what it shows)',
  ]);
});

test('every line fits the width: long values are cut with an ellipsis', () => {
  const long = 'x'.repeat(300);
  const text = renderHistory([entry({ changes: { description: [long, `${long}y`] } })]);
  for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  expect(text.split('\n')[1]).toMatch(/^ {4}description: "x+…$/);
  expect(renderHistory([], 80)).toBe('(no events)');
});

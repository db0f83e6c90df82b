import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bidsPlan, parseBidsName, parseParticipants, sidecarApplies } from '#cli/import/bidsPlan';
import type { AtlasRef, Catalogue, CategoryRef, SpeciesRef } from '#cli/import/catalogue';
import { folderPlan } from '#cli/import/folderPlan';
import { manifestPlan, parseManifest } from '#cli/import/manifestPlan';
import { nameFromFile, scanExtension } from '#cli/import/scanFormats';
import { scratchDir } from '#tests/support/scratchDir';

/** A catalogue as the server would answer it, counting the questions (each value asked once). */
function fakeCatalogue() {
  const mammals: CategoryRef = { id: 1, name: 'mammals' };
  const birds: CategoryRef = { id: 2, name: 'birds' };
  const mouse: SpeciesRef = {
    id: 10,
    scientific_name: 'Mus musculus',
    category: mammals,
    atlases: [{ id: 100, slug: 'allen' }],
    atlases_count: 1,
  };
  const rat: SpeciesRef = {
    id: 11,
    scientific_name: 'Rattus norvegicus',
    category: mammals,
    atlases: [
      { id: 101, slug: 'waxholm' },
      { id: 102, slug: 'paxinos' },
    ],
    atlases_count: 2,
  };
  const allen: AtlasRef = {
    id: 100,
    slug: 'allen',
    name: 'Allen',
    species: { id: 10, scientific_name: 'Mus musculus', category: mammals },
  };
  const asked: string[] = [];
  const catalogue: Catalogue = {
    atlas: (key) => {
      asked.push(`atlas:${key}`);
      return Promise.resolve(key === 'allen' || key === '100' ? allen : undefined);
    },
    category: (key) => {
      asked.push(`category:${key}`);
      return Promise.resolve(
        [mammals, birds].find((c) => c.name === key.toLowerCase() || String(c.id) === key),
      );
    },
    species: (name) => {
      asked.push(`species:${name}`);
      return Promise.resolve(
        [mouse, rat].find((s) => s.scientific_name.toLowerCase() === name.toLowerCase()),
      );
    },
  };
  return { catalogue, asked };
}

const NIFTI = Buffer.alloc(352);

describe('scan names', () => {
  it.each([
    ['brain.nii', '.nii', 'brain'],
    ['Brain.NII.GZ', '.nii.gz', 'Brain'],
    ['stack.TIFF', '.tiff', 'stack'],
    ['s.tif', '.tif', 's'],
    ['store.zarr', '.zarr', 'store'],
    ['notes.txt', undefined, 'notes.txt'],
    ['.nii', undefined, '.nii'],
  ])('%s', (file, ext, name) => {
    expect(scanExtension(file)).toBe(ext);
    expect(nameFromFile(`some/dir/${file}`)).toBe(name);
  });
});

describe('manifest', () => {
  let dir: string;
  beforeAll(() => {
    dir = scratchDir('bic-manifest-unit-');
    mkdirSync(path.join(dir, 'scans'));
    for (const f of ['a.nii', 'b.nii.gz', 'c.tif', 'notes.txt'])
      writeFileSync(path.join(dir, 'scans', f), NIFTI);
  });
  const plan = (text: string, defaults = {}) => {
    const fake = fakeCatalogue();
    return manifestPlan(
      path.join(dir, 'brains.csv'),
      text,
      defaults,
      fake.catalogue,
      Date.parse('2026-01-01T00:00:00Z'),
    ).then((p) => ({ ...p, asked: fake.asked }));
  };

  it('a valid manifest: every row planned in order, fields as create takes them, each catalogue value asked once', async () => {
    const result = await plan(
      [
        'file,name,atlas,category,description,is_reference,visibility,embargo_until,extra_link,website,color',
        'scans/a.nii,Alpha,allen,,first,yes,,,https://example.org/a,,#ABC',
        'scans/b.nii.gz,,allen,,,false,private,,,,',
        '"scans/c.tif","Gamma, with a comma",,mammals,,,,2027-01-31,,http://lab.example,',
      ].join('\n'),
    );
    expect(result.issues).toEqual([]);
    expect(result.scans.map((s) => [s.relativePath, s.fields])).toEqual([
      [
        'scans/a.nii',
        {
          name: 'Alpha',
          atlas: '100',
          category: undefined,
          description: 'first',
          is_reference: 'true',
          extra_link: 'https://example.org/a',
          website: undefined,
          color: '#ABC',
          visibility: undefined,
        },
      ],
      [
        'scans/b.nii.gz',
        expect.objectContaining({ name: 'b', atlas: '100', is_reference: undefined, visibility: 'private' }),
      ],
      [
        'scans/c.tif',
        expect.objectContaining({
          name: 'Gamma, with a comma',
          category: '1',
          visibility: 'embargoed',
          embargo_until: '2027-01-31T00:00:00.000Z',
          website: 'http://lab.example',
        }),
      ],
    ]);
    expect(result.asked.filter((a) => a === 'atlas:allen').length).toBeLessThanOrEqual(2); // the fake does not cache
  });

  it('every bad row is listed with its line and column; nothing is planned past a bad row', async () => {
    const result = await plan(
      [
        'file,name,atlas,category,species,is_reference,visibility,embargo_until,color,website',
        'scans/a.nii,A,allen,,,,,,,', // line 2: fine
        'scans/missing.nii,M,allen,,,,,,,', // 3: no such file
        'scans/notes.txt,N,allen,,,,,,,', // 4: not a scan
        'scans/b.nii.gz,B,nowhere,,,,,,,', // 5: unknown atlas
        'scans/c.tif,C,,fish,,,,,,', // 6: unknown category
        ',E,allen,,,,,,,', // 7: no file
        'scans/a.nii,A2,allen,,,,,,,', // 8: same file as line 2
        'scans/b.nii.gz,a,allen,,,maybe,,,,', // 9: same file as line 5; boolean; same name as line 2 (case-insensitive)
        'scans/c.tif,V,allen,,,,secret,,,', // 10: visibility
        'scans/c.tif,X,allen,,,,embargoed,,red,ftp://x', // 11: same file; no embargo date; colour; website
        'scans/c.tif,Y,allen,,,,,2020-01-01,,', // 12: same file; embargo in the past
        'scans/c.tif,Z,allen,,Rattus norvegicus,,,,,', // 13: same file; species not the atlas's
        'scans/c.tif,W,,,Rattus norvegicus,,,,,', // 14: same file; species with two atlases
        'scans/c.tif,Q,,birds,Mus musculus,,,,,', // 15: same file; species not in the category
      ].join('\n'),
    );
    expect(result.scans).toHaveLength(1);
    const byLine = (line: number) => result.issues.filter((i) => i.row === line).map((i) => i.column);
    expect(byLine(2)).toEqual([]);
    expect(byLine(3)).toEqual(['file']);
    expect(byLine(4)).toEqual(['file']);
    expect(byLine(5)).toEqual(['atlas']);
    expect(byLine(6)).toEqual(['category']);
    expect(byLine(7)).toEqual(['file']);
    expect(byLine(8)).toEqual(['file']);
    expect(byLine(9).sort()).toEqual(['file', 'is_reference', 'name']);
    expect(byLine(10).sort()).toEqual(['file', 'visibility']); // c.tif is line 6's
    expect(byLine(11).sort()).toEqual(['color', 'embargo_until', 'file', 'website']);
    expect(byLine(12).sort()).toEqual(['embargo_until', 'file']);
    expect(byLine(13).sort()).toEqual(['file', 'species']);
    expect(byLine(14).sort()).toEqual(['file', 'species']);
    expect(byLine(15).sort()).toEqual(['file', 'species']);
    expect(result.issues.find((i) => i.row === 3)?.message).toMatch(/no file scans\/missing\.nii/);
    expect(result.issues.find((i) => i.row === 8)?.message).toBe('the same file as row 2');
    expect(result.issues.find((i) => i.row === 14 && i.column === 'species')?.message).toMatch(
      /has 2 atlases/,
    );
  });

  it('the header is checked first: unknown and missing columns, and rows of the wrong width', () => {
    expect(parseManifest('name,atlass\nx,1\n').issues.map((i) => [i.row, i.column])).toEqual([
      [1, 'atlass'],
      [1, 'file'],
    ]);
    const ragged = parseManifest('file,name\na.nii,A\nb.nii\nc.nii,C,extra\n');
    expect(ragged.issues.map((i) => i.row)).toEqual([3, 4]);
    expect(parseManifest('file,name\n').issues[0]?.message).toBe('the manifest has no rows');
    expect(parseManifest('\uFEFFFile, Name \r\na.nii,A\r\n').rows[0]?.cells).toEqual({
      file: 'a.nii',
      name: 'A',
    });
  });

  it('flags fill blank cells: --category for rows without an atlas, --species picks its only atlas', async () => {
    const result = await plan('file,atlas,category\nscans/a.nii,,\nscans/b.nii.gz,allen,\n', {
      category: 'mammals',
    });
    expect(result.issues).toEqual([]);
    expect(result.scans.map((s) => [s.fields.atlas, s.fields.category])).toEqual([
      [undefined, '1'],
      ['100', undefined],
    ]);
    const bySpecies = await plan('file\nscans/a.nii\n', { species: 'mus musculus' });
    expect(bySpecies.scans[0]?.fields.atlas).toBe('100');
    const nothing = await plan('file\nscans/a.nii\n');
    expect(nothing.issues.map((i) => [i.row, i.column])).toEqual([[2, 'atlas']]);
  });
});

describe('BIDS', () => {
  it('file names: entities and suffix', () => {
    const name = parseBidsName('sub-01_ses-02_task-rest_run-1_bold.nii.gz');
    expect(name?.stem).toBe('sub-01_ses-02_task-rest_run-1_bold');
    expect(Object.fromEntries(name?.entities ?? [])).toEqual({
      sub: '01',
      ses: '02',
      task: 'rest',
      run: '1',
    });
    expect(name?.suffix).toBe('bold');
    expect(parseBidsName('sub-01_sub-02_T1w.nii')).toBeUndefined();
    expect(parseBidsName('sub01_T1w.nii')).toBeUndefined();
    const image = parseBidsName('sub-01_ses-02_task-rest_bold.nii')!;
    expect(sidecarApplies(parseBidsName('task-rest_bold.json')!, image)).toBe(true);
    expect(sidecarApplies(parseBidsName('sub-01_task-rest_bold.json')!, image)).toBe(true);
    expect(sidecarApplies(parseBidsName('task-nback_bold.json')!, image)).toBe(false);
    expect(sidecarApplies(parseBidsName('task-rest_T1w.json')!, image)).toBe(false);
  });

  it('participants.tsv: species per subject, n/a and blanks are none', () => {
    const parsed = parseParticipants(
      'participant_id\tage\tspecies\nsub-01\t3\tMus musculus\n02\t4\tn/a\nsub-03\t5\t\n',
    );
    expect([...parsed.species]).toEqual([['sub-01', 'Mus musculus']]);
    expect(parseParticipants('id\tspecies\n').issue).toMatch(/participant_id/);
  });

  it('one scan per NIfTI image, named by its entities, sidecars inherited (deeper wins), species per subject', async () => {
    const root = scratchDir('bic-bids-unit-');
    const write = (rel: string, content: string | Buffer) => {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      writeFileSync(path.join(root, rel), content);
    };
    write('dataset_description.json', JSON.stringify({ Name: 'Unit', BIDSVersion: '1.9.0' }));
    write('participants.tsv', 'participant_id\tspecies\nsub-01\tMus musculus\n');
    write('task-rest_bold.json', JSON.stringify({ RepetitionTime: 2, EchoTime: 0.05, TaskName: 'rest' }));
    write('sub-01/sub-01_task-rest_bold.json', JSON.stringify({ EchoTime: 0.04 }));
    write('sub-01/ses-1/func/sub-01_ses-1_task-rest_bold.nii.gz', NIFTI);
    write('sub-01/ses-1/func/sub-01_ses-1_task-rest_bold.json', JSON.stringify({ EchoTime: 0.03 }));
    write('sub-01/ses-1/anat/sub-01_ses-1_T1w.nii', NIFTI);
    write('sub-02/anat/sub-02_T1w.nii', NIFTI);
    write('sub-02/anat/sub-02_T1w.json', '{ not json');
    write('derivatives/sub-01/anat/sub-01_T1w.nii', NIFTI);
    write('sub-03/anat/sub-04_T1w.nii', NIFTI);
    const fake = fakeCatalogue();
    const plan = await bidsPlan(root, { species: 'Rattus norvegicus', category: 'mammals' }, fake.catalogue);
    expect(plan.identity).toBe('bids:Unit');
    expect(plan.scans.map((s) => [s.relativePath, s.fields.name, s.fields.category, s.sidecar])).toEqual([
      ['sub-01/ses-1/anat/sub-01_ses-1_T1w.nii', 'sub-01_ses-1_T1w', '1', undefined],
      [
        'sub-01/ses-1/func/sub-01_ses-1_task-rest_bold.nii.gz',
        'sub-01_ses-1_task-rest_bold',
        '1',
        { RepetitionTime: 2, EchoTime: 0.03, TaskName: 'rest' },
      ],
      ['sub-02/anat/sub-02_T1w.nii', 'sub-02_T1w', '1', undefined],
    ]);
    expect(plan.issues.map((i) => [i.file, i.column])).toEqual([
      ['sub-03/anat/sub-04_T1w.nii', 'file'],
      ['sub-02/anat/sub-02_T1w.json', 'sidecar'],
    ]);
    // Without a category, sub-01's mouse has one atlas; --species' rat has two: sub-02 cannot be placed.
    const unplaced = await bidsPlan(root, { species: 'Rattus norvegicus' }, fakeCatalogue().catalogue);
    expect(unplaced.scans.map((s) => [s.fields.name, s.fields.atlas])).toEqual([
      ['sub-01_ses-1_T1w', '100'],
      ['sub-01_ses-1_task-rest_bold', '100'],
    ]);
    expect(unplaced.issues.filter((i) => i.column === '--species').map((i) => i.file)).toEqual([
      'sub-02/anat/sub-02_T1w.nii',
    ]);
  });
});

describe('folder', () => {
  it('every supported file below the folder (case-insensitive), hidden ones skipped; --no-recursive stays at the top', async () => {
    const root = scratchDir('bic-folder-unit-');
    mkdirSync(path.join(root, 'deep', 'er'), { recursive: true });
    mkdirSync(path.join(root, '.hidden'));
    for (const f of [
      'A.NII',
      'b.nii.gz',
      'notes.txt',
      'deep/c.TIF',
      'deep/er/d.zarr',
      '.hidden/e.nii',
      '.f.nii',
    ])
      writeFileSync(path.join(root, f), NIFTI);
    const fake = fakeCatalogue();
    const plan = await folderPlan(root, { category: 'birds', recursive: true }, fake.catalogue);
    expect(plan.issues).toEqual([]);
    expect(plan.scans.map((s) => [s.relativePath, s.fields.name, s.fields.category])).toEqual([
      ['A.NII', 'A', '2'],
      ['b.nii.gz', 'b', '2'],
      ['deep/c.TIF', 'c', '2'],
      ['deep/er/d.zarr', 'd', '2'],
    ]);
    const flat = await folderPlan(root, { category: 'birds', recursive: false }, fake.catalogue);
    expect(flat.scans.map((s) => s.relativePath)).toEqual(['A.NII', 'b.nii.gz']);
    const unknown = await folderPlan(root, { category: 'fish', recursive: true }, fake.catalogue);
    expect(unknown.issues).toEqual([{ row: 0, column: '--category', message: 'no category fish' }]);
  });
});

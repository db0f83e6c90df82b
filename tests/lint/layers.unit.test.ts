import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The layer rules of .dependency-cruiser.cjs bite: files written into the tree that break them fail
 * dependency-cruiser with the rule's name, and the tree as committed passes.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
// Not *.test.ts (test code is outside the layer rules), unique per run, removed in afterAll.
const TAG = `layerProbe${process.pid}`;

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}

function depcruise(paths: readonly string[]): { errors: number; violations: Violation[] } {
  const run = spawnSync(
    process.execPath,
    [DEPCRUISE, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', ...paths],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  if (run.error) throw run.error;
  // The json reporter exits 0 whatever it found (the err reporter of npm run lint exits non-zero).
  const result = JSON.parse(run.stdout) as { summary: { error: number; violations: Violation[] } };
  return { errors: result.summary.error, violations: result.summary.violations };
}

const written: string[] = [];
const createdDirs: string[] = [];

function write(file: string, text: string): string {
  const dir = path.dirname(path.join(ROOT, file));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(ROOT, file), text);
  written.push(file);
  return file;
}

afterAll(() => {
  for (const file of written.splice(0)) rmSync(path.join(ROOT, file), { force: true });
  for (const dir of createdDirs.splice(0)) rmSync(path.join(ROOT, dir), { recursive: true, force: true });
});

test('the tree as committed breaks no layer rule', () => {
  const { errors, violations } = depcruise(['shared', 'services', 'cli']);
  expect(violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  expect(errors).toBe(0);
}, 120_000);

test('a file cycle, a folder cycle, a low layer importing a higher one, a service importing another and an unplaced shared folder are each refused by name', () => {
  const cycleA = write(
    `shared/logging/${TAG}CycleA.ts`,
    `import { b } from './${TAG}CycleB';\nexport const a = (): number => b() + 1;\n`,
  );
  const cycleB = write(
    `shared/logging/${TAG}CycleB.ts`,
    `import { a } from './${TAG}CycleA';\nexport const b = (): number => (typeof a === 'function' ? 1 : 0);\n`,
  );
  const lowToHigh = write(
    `shared/runtime/${TAG}LowToHigh.ts`,
    `import { runUntilSignal } from '#shared/platform/runUntilSignal';\nexport const probe = runUntilSignal;\n`,
  );
  const serviceToService = write(
    `services/relay/${TAG}ServiceToService.ts`,
    `import { startProjector } from '#services/projector/startProjector';\nexport const probe = startProjector;\n`,
  );
  createdDirs.push(`shared/${TAG}`);
  const unplaced = write(
    `shared/${TAG}/unplaced.ts`,
    `import { createLogger } from '#shared/logging/logger';\nexport const probe = createLogger;\n`,
  );

  // Two folders that lean on each other, though no file closes a cycle.
  createdDirs.push(`services/relay/${TAG}X`, `services/relay/${TAG}Y`);
  const folderX = write(
    `services/relay/${TAG}X/x.ts`,
    `import { y } from '#services/relay/${TAG}Y/y';\nexport const x = y;\n`,
  );
  write(`services/relay/${TAG}X/z.ts`, `export const z = 1;\n`);
  write(
    `services/relay/${TAG}Y/y.ts`,
    `import { z } from '#services/relay/${TAG}X/z';\nexport const y = z;\n`,
  );

  const { errors, violations } = depcruise([cycleA, cycleB, lowToHigh, serviceToService, unplaced, folderX]);

  expect(errors).toBeGreaterThanOrEqual(5);
  const named = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
  expect(named).toEqual(
    expect.arrayContaining([
      `no-circular: ${cycleA} → ${cycleB}`,
      `layer-runtime: ${lowToHigh} → shared/platform/runUntilSignal.ts`,
      `service-not-to-other-service: ${serviceToService} → services/projector/startProjector.ts`,
      `shared-folder-has-a-layer: ${unplaced} → shared/logging/logger.ts`,
      `no-folder-cycles: services/relay/${TAG}X → services/relay/${TAG}Y`,
    ]),
  );
}, 120_000);

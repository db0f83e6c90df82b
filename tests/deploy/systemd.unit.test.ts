import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const SYSTEMD = path.resolve(__dirname, '../../deploy/systemd');
const KINDS = ['command-api', 'query-api', 'projector', 'processor', 'relay'];
const HARDENING = [
  'NoNewPrivileges=yes',
  'ProtectSystem=strict',
  'ReadWritePaths=/var/lib/brain-catalogue',
  'PrivateTmp=yes',
  'ProtectHome=yes',
  'PrivateDevices=yes',
  'RestrictNamespaces=yes',
  'CapabilityBoundingSet=',
  'SystemCallFilter=@system-service',
];

/** The unit's settings as "Key=value" lines, comments and blank lines left out. */
function settings(file: string): string[] {
  return readFileSync(path.join(SYSTEMD, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

test('one instance-numbered unit per kind of service, and a target grouping them', () => {
  expect(readdirSync(SYSTEMD).sort()).toEqual(
    [...KINDS.map((kind) => `brain-catalogue-${kind}@.service`), 'brain-catalogue.target'].sort(),
  );
});

test.each(KINDS)(
  'brain-catalogue-%s@.service: its entry point, a port per instance, restarts, hardening',
  (kind) => {
    const unit = settings(`brain-catalogue-${kind}@.service`);
    expect(unit).toContain(`ExecStart=/usr/bin/node dist/services/${kind}/main.js`);
    expect(unit.find((line) => line.startsWith('Environment='))).toMatch(/ PORT=8\d0%i /);
    expect(unit).toEqual(expect.arrayContaining(['Restart=always', 'User=brain-catalogue', ...HARDENING]));
    // V8's JIT needs writable executable memory.
    expect(unit.some((line) => line.startsWith('MemoryDenyWriteExecute=yes'))).toBe(false);
  },
);

test('`systemd-analyze verify` accepts every unit without a warning', () => {
  for (const kind of KINDS) {
    const run = spawnSync('systemd-analyze', ['verify', '--man=no', `./brain-catalogue-${kind}@1.service`], {
      cwd: SYSTEMD,
      encoding: 'utf8',
    });
    if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(
        'systemd-analyze not found: apt-get install systemd (tests/support/ensureTestTools.sh)',
      );
    expect({ kind, status: run.status, output: `${run.stdout}${run.stderr}`.trim() }).toEqual({
      kind,
      status: 0,
      output: '',
    });
  }
});

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Where a contract suite for a server that cannot run here (EventStoreDB, Elasticsearch) gets one:
 * a URL from the environment, a container through testcontainers where a Docker engine answers, or
 * nowhere, with the one `skipped: <why>` line to print.
 */
export type ServerAvailability =
  { readonly configured: string } | { readonly docker: true } | { readonly skip: string };

/**
 * Asks testcontainers for a container runtime in a child process: jest registers suites
 * synchronously, and a child can be killed at the deadline without leaving handles behind.
 * Exit 0: a runtime answered; 1: none; 3: testcontainers itself could not load.
 */
const PROBE = `
setTimeout(() => process.exit(1), 4000).unref();
let testcontainers;
try { testcontainers = require(process.argv[1]); } catch { process.exit(3); }
testcontainers.getContainerRuntimeClient().then(() => process.exit(0), () => process.exit(1));
`;

function probeDocker(): number {
  try {
    execFileSync(process.execPath, ['-e', PROBE, require.resolve('testcontainers')], {
      stdio: 'ignore',
      timeout: 4500,
    });
    return 0;
  } catch (error) {
    const status = (error as { status?: number | null }).status;
    return typeof status === 'number' ? status : 1;
  }
}

/** A Docker engine might be there even though testcontainers could not load to ask it. */
function dockerEngineHinted(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

export function serverAvailability(suite: string, variable: string): ServerAvailability {
  const configured = process.env[variable];
  if (configured) return { configured };
  const probe = probeDocker();
  if (probe === 0) return { docker: true };
  if (probe === 3 && dockerEngineHinted())
    return { skip: `skipped: ${suite} — testcontainers cannot load on Node ${process.version}` };
  return { skip: `skipped: ${suite} — no ${variable} and no Docker engine` };
}

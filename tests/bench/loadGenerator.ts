import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { perSecond, withUnit } from './figure';

export interface LoadRequest {
  readonly url: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly headers: Record<string, string>;
  /** When given, each request takes one of these paths at random (url then names the origin). */
  readonly paths?: readonly string[];
  /** A fixed request rate over all connections (autocannon's overallRate) instead of as fast as possible. */
  readonly overallRate?: number;
  /** POST instead of GET, with this body (base64: it crosses to the child as JSON). */
  readonly post?: { readonly bodyBase64: string };
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
}

/** Compiled, the child is a .js beside this file; under tsx it is the .ts (fork keeps tsx's --import). */
const CHILD = path.join(__dirname, `autocannonChild${path.extname(__filename)}`);

const running = new Set<ChildProcess>();

/** One autocannon run in a child process. */
export function generateLoad(request: LoadRequest): Promise<LoadResult> {
  const child = fork(CHILD, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  running.add(child);
  return new Promise<LoadResult>((resolve, reject) => {
    let result: LoadResult | undefined;
    child.once('message', (message: LoadResult) => (result = message));
    child.once('error', reject);
    child.once('exit', (code) => {
      running.delete(child);
      if (result) resolve(result);
      else reject(new Error(`the load generator exited with ${code ?? 'a signal'} and no result`));
    });
    child.send(request);
  });
}

/** For the cleanup stack: an interrupted run must not leave a load generator behind. */
export function stopLoadGenerators(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** A rate over failing requests measures the failure path, not the endpoint: stop instead. */
export function checked(result: LoadResult): LoadResult {
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`load run had ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  return result;
}

/** A run in one line: its rate, p50 and p99. */
export function summarise(result: LoadResult): string {
  return `${withUnit(perSecond('req'), result.requestsPerSecond)} (p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms)`;
}

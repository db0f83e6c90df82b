import autocannon from 'autocannon';
import type { LoadRequest, LoadResult } from './loadGenerator';

/**
 * Runs in its own process (forked by loadGenerator.ts), so generating the load never competes with
 * the measured server for its event loop. Receives one LoadRequest, answers one LoadResult, exits.
 */
process.once('message', (message: LoadRequest) => {
  void run(message).then(
    (result) => process.send?.(result, () => process.exit(0)),
    (error: unknown) => {
      process.stderr.write(`autocannon failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
});

async function run(request: LoadRequest): Promise<LoadResult> {
  const result = await autocannon({
    url: request.url,
    connections: request.connections,
    duration: request.durationSeconds,
    headers: request.headers,
    ...(request.overallRate === undefined ? {} : { overallRate: request.overallRate }),
    ...(request.post === undefined
      ? {}
      : { method: 'POST' as const, body: Buffer.from(request.post.bodyBase64, 'base64') }),
    ...(request.paths === undefined ? {} : { requests: [{ setupRequest: randomPath(request.paths) }] }),
  });
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
  };
}

function randomPath(paths: readonly string[]): (request: autocannon.Request) => autocannon.Request {
  return (request) => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)] });
}

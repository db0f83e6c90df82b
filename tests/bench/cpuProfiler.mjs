// A CPU profile of the whole life of a bench's server, for NODE_OPTIONS (where Node 20 refuses
// --cpu-prof): NODE_OPTIONS="--import=./tests/bench/cpuProfiler.mjs" with CPU_PROFILE_DIR set.
// The profile is written when the process exits (a bench stops its server with SIGTERM then) as
// <CPU_PROFILE_DIR>/<pid>.cpuprofile, to open in Chrome DevTools or speedscope.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.CPU_PROFILE_DIR;
if (dir && isMainThread) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', {
    interval: Number(process.env.CPU_PROFILE_INTERVAL_US ?? 1000),
  });
  session.post('Profiler.start');
  // The session is in this thread: its answers come synchronously, so the exit handler can write.
  process.once('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(path.join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}

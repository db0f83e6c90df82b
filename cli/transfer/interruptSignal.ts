import { ExitCode } from '#cli/exitCodes';
/**
 * An AbortSignal that Ctrl-C (SIGINT) or SIGTERM aborts, instead of killing the process at once:
 * uploads stop where they are (left on the server, to resume) and the command ends cleanly. A
 * second Ctrl-C while stopping exits at once (130). `dispose` puts the default handling back.
 */
export function interruptSignal(): { signal: AbortSignal; dispose(): void; readonly interrupted: boolean } {
  const controller = new AbortController();
  const onSignal = (): void => {
    if (controller.signal.aborted) process.exit(ExitCode.interrupted);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    get interrupted() {
      return controller.signal.aborted;
    },
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it. */
export const INTERRUPTED_EXIT_CODE = ExitCode.interrupted;

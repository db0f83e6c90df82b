import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { CliError, ExitCode } from '#cli/exitCodes';

/**
 * Asks one line on the terminal (stderr, so stdout stays clean). With `hidden`, nothing typed is
 * echoed: readline writes its echo through a stream that is muted once the question is shown.
 */
export async function prompt(
  question: string,
  options: { hidden?: boolean; instead?: string } = {},
): Promise<string> {
  if (!process.stdin.isTTY)
    throw new CliError(
      `no terminal to ask "${question.replace(/[:\s]+$/, '')}" on: ${options.instead ?? 'pass --email and --password-stdin (or --token)'}`,
      ExitCode.usage,
    );
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  const cancelled = new Promise<never>((_, reject) =>
    rl.once('SIGINT', () => reject(new CliError('cancelled', ExitCode.failure))),
  );
  try {
    const answer = rl.question(question); // writes the question at once, before the mute
    muted = options.hidden === true;
    return await Promise.race([answer, cancelled]);
  } finally {
    if (muted) process.stderr.write('\n');
    rl.close();
  }
}

/** Everything on stdin, without its final newline (for --password-stdin). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

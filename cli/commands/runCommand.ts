import type { Command } from 'commander';
import { type CliContext, createContext } from '#cli/context';

/** A command's body: the run's context, its options, then its arguments. */
export type CommandBody<O> = (ctx: CliContext, opts: O, ...args: string[]) => Promise<void>;

/** Turns a command body into a commander action (the context is built only when a command runs). */
export type RunCommand = <O>(body: CommandBody<O>) => (...params: unknown[]) => Promise<void>;

export function commandRunner(program: Command, version: string): RunCommand {
  return <O>(body: CommandBody<O>) =>
    async (...params: unknown[]) => {
      const command = params[params.length - 1] as Command;
      const args = params.slice(0, -2).flatMap((a) => (Array.isArray(a) ? (a as string[]) : [a as string]));
      const ctx = await createContext(program.opts<{ server?: string }>(), version);
      await body(ctx, command.opts() as O, ...args);
    };
}

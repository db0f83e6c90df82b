/** Who asked, and under which request: copied into every event's metadata. */
export interface CommandContext {
  readonly actor: string;
  readonly requestId: string | null;
  readonly correlationId: string;
  readonly causationId: string | null;
}

export const systemContext = (reason: string): CommandContext => ({
  actor: 'system',
  requestId: null,
  correlationId: `system:${reason}`,
  causationId: null,
});

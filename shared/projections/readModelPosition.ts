import type { Pool } from 'pg';
import { type GlobalPosition, START } from '#shared/eventStore/eventStore';
import { FreshRun } from '#shared/runtime/freshRun';
import { readLivePosition } from './checkpointStore';

/**
 * The position every live read model has reached, as their checkpoints in the database say (not as
 * this process has heard). A read asked for while another is in flight waits for the next one,
 * never the one in flight, which may have started before the asker's caller saw a write commit:
 * so the answer covers everything committed before the ask. Concurrent askers share reads (at most
 * one in flight, one queued), which keeps this cheap under load.
 */
export class ReadModelPosition {
  private readonly reads: FreshRun<GlobalPosition>;

  constructor(private readonly pool: Pool) {
    this.reads = new FreshRun(() => this.query());
  }

  read(): Promise<GlobalPosition> {
    return this.reads.ask();
  }

  private async query(): Promise<GlobalPosition> {
    return (await readLivePosition(this.pool)) ?? START;
  }
}

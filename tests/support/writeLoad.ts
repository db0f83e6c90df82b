import { LoadClient, type LoadClientOptions } from './loadClient';
import { createLoadLedger, type LoadLedger } from './loadLedger';

export interface WriteLoad {
  readonly ledger: LoadLedger;
  /** Lets every client finish its request in flight, then resolves. */
  stop(): Promise<void>;
}

/** While the service is down, clients retry at this pace instead of spinning on refused connections. */
const RETRY_DELAY_MS = 50;

/** Several clients writing concurrently over HTTP until stopped, surviving the service's restarts. */
export function startWriteLoad(baseUrl: string, clients: number, options: LoadClientOptions = {}): WriteLoad {
  const ledger = createLoadLedger();
  let stopping = false;
  const loops = Array.from({ length: clients }, async (_, i) => {
    const client = new LoadClient(baseUrl, `c${i}`, ledger, options);
    while (!stopping) {
      await client.step();
      if (client.lastCallUnreachable) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
    }
  });
  return {
    ledger,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

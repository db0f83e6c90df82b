import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { systemContext } from '#shared/commandHandling/commandContext';
import { decideBrain } from '#shared/domain/brains/decide';
import { type BrainState, brainDecider, brainStreamName } from '#shared/domain/brains/events';
import type { HealthCheck } from '#shared/http/system/healthChecks';
import type { Logger } from '#shared/logging/logger';
import { loopHealthCheck } from '#shared/platform/loopHealthCheck';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import type { Backoff } from '#shared/runtime/backoff';
import { type LoopMetrics, type SupervisedLoop, startSupervisedLoop } from '#shared/runtime/supervisedLoop';

export const EMBARGO_TIMER_LOOP = 'embargo_timer';

/** The longest sleep: an embargo set (or moved earlier) while the timer sleeps is seen by then. */
export const EMBARGO_POLL_MS = 5_000;
/** The shortest sleep, so that a clock a little behind the database's cannot make the timer spin. */
const MIN_SLEEP_MS = 200;
const BATCH = 100;
const UNDEFINED_TABLE = '42P01';

export interface EmbargoTimerDeps {
  readonly store: EventStore;
  /** The read models' database (its `brains` table and partial index on embargoed brains). */
  readonly pool: Pool;
  readonly logger: Logger;
  readonly metrics?: LoopMetrics;
  readonly clock?: () => Date;
  readonly backoff?: Partial<Backoff>;
  readonly pollMs?: number;
}

export interface RunningEmbargoTimer {
  readonly loop: SupervisedLoop;
  /** /health/: failing while the timer cannot read the read model or write the events. */
  readonly healthCheck: HealthCheck;
  stop(): Promise<void>;
}

interface Embargo {
  readonly id: number;
  readonly embargo_until: Date;
  readonly ended: boolean;
}

const CONTEXT = systemContext('embargo-timer');

/**
 * Records EmbargoLifted for every embargo whose time has passed (decisions.md "Visibility and
 * collaborators"): the history's record only, since an ended embargo reads public without it. It
 * finds them in the read model (brains embargoed with embargo_until <= now(), by the database's
 * clock), sends LiftEmbargo to each brain's stream, and sleeps until the next end (at most
 * `pollMs`). Several processors may do it at once: the decider lifts only a brain stored as
 * embargoed, and the append expects the revision it decided on, so one EmbargoLifted is written
 * and the loser's retry decides nothing. Outages are retried by the supervised loop.
 */
export function startEmbargoTimer(deps: EmbargoTimerDeps): RunningEmbargoTimer {
  const clock = deps.clock ?? (() => new Date());
  const pollMs = deps.pollMs ?? EMBARGO_POLL_MS;
  /** Lifted by this timer, by the embargo they had: the read model may not show it yet. */
  let lifted = new Map<number, number>();

  async function endedEmbargoes(): Promise<Embargo[]> {
    try {
      const { rows } = await deps.pool.query<Embargo>(
        `SELECT id, embargo_until, embargo_until <= now() AS ended FROM brains
          WHERE visibility = 'embargoed' ORDER BY embargo_until LIMIT $1`,
        [BATCH],
      );
      return rows;
    } catch (error) {
      // The projector has not made its tables yet (a fresh deployment): nothing is embargoed.
      if ((error as { code?: string }).code === UNDEFINED_TABLE) return [];
      throw error;
    }
  }

  async function lift(brainId: number): Promise<boolean> {
    const result = await handleCommand(
      deps.store,
      brainStreamName(brainId),
      brainDecider,
      (state: BrainState) =>
        decideBrain({ type: 'LiftEmbargo', data: { now: clock().toISOString() } }, state),
      CONTEXT,
    );
    return result.events.length > 0;
  }

  /** Lifts what has ended; resolves with how long to sleep. */
  async function round(): Promise<number> {
    const embargoes = await endedEmbargoes();
    const seen = new Map<number, number>();
    let wait = pollMs;
    for (const { id, embargo_until: until, ended } of embargoes) {
      const at = until.getTime();
      if (!ended) {
        wait = Math.min(wait, at - clock().getTime());
        break;
      }
      if (lifted.get(id) === at) {
        seen.set(id, at);
        continue;
      }
      if (await lift(id))
        deps.logger.info('embargo lifted', { brain_id: id, embargo_until: until.toISOString() });
      // Lifted now, or by another processor, or not yet by this clock (then the next round tries again).
      if (at <= clock().getTime()) seen.set(id, at);
      else wait = Math.min(wait, at - clock().getTime());
    }
    lifted = seen;
    return Math.max(MIN_SLEEP_MS, Math.min(wait, pollMs));
  }

  const loop = startSupervisedLoop({
    name: EMBARGO_TIMER_LOOP,
    body: async ({ signal, up }) => {
      while (!signal.aborted) {
        const wait = await round();
        up();
        await abortableSleep(wait, signal, { unref: true });
      }
    },
    logger: deps.logger,
    metrics: deps.metrics,
    backoff: deps.backoff,
  });
  return {
    loop,
    healthCheck: loopHealthCheck(() => loop.status()),
    stop: () => loop.stop(),
  };
}

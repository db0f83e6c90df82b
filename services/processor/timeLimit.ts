import type { ProcessorConfig } from '#shared/config/config';

type TimeLimitSettings = Pick<
  ProcessorConfig,
  'timeoutSeconds' | 'timeoutBaseSeconds' | 'timeoutPerGibSeconds'
>;

const GIB = 1024 ** 3;

/**
 * How long, in whole seconds, the inspection of a file of `sizeBytes` may run: a base plus so much
 * per GiB, at most `timeoutSeconds`. A small file cannot hold a slot for the cap; a big one gets the
 * time its bytes need.
 */
export function inspectionTimeLimitSeconds(settings: TimeLimitSettings, sizeBytes: number): number {
  const budget = settings.timeoutBaseSeconds + (settings.timeoutPerGibSeconds * sizeBytes) / GIB;
  return Math.min(settings.timeoutSeconds, Math.round(budget));
}

import type { Projection } from '../../../shared/projections/projection';
import { identityProjection } from './identityProjection';
import { eventTypeCountsProjection } from './eventTypeCountsProjection';

/** Every PostgreSQL read model, in the order they are applied within a batch. */
export const allProjections: readonly Projection[] = [identityProjection, eventTypeCountsProjection];

import { InvalidArgumentError } from 'commander';

export const VISIBILITIES = ['public', 'private', 'embargoed'] as const;
export type VisibilityName = (typeof VISIBILITIES)[number];

export const ROLES = ['viewer', 'editor'] as const;

export const visibilityName = (raw: string): string => {
  if (!(VISIBILITIES as readonly string[]).includes(raw))
    throw new InvalidArgumentError(`one of ${VISIBILITIES.join(', ')}`);
  return raw;
};

export const roleName = (raw: string): string => {
  if (!(ROLES as readonly string[]).includes(raw))
    throw new InvalidArgumentError(`one of ${ROLES.join(', ')}`);
  return raw;
};

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An embargo's end as the server takes it (an ISO 8601 UTC time): `YYYY-MM-DD` is that day's
 * midnight UTC; a time without a zone is the local time of this machine, as the user typed it.
 * Whether it lies in the future is the server's to say (400 on `embargo_until`).
 */
export const embargoDate = (raw: string): string => {
  const text = raw.trim();
  if (!DAY.test(text) && !ISO_TIME.test(text))
    throw new InvalidArgumentError('a date (YYYY-MM-DD) or an ISO 8601 time (2027-01-31T12:00:00Z)');
  const ms = Date.parse(DAY.test(text) ? `${text}T00:00:00Z` : text.replace(' ', 'T'));
  if (Number.isNaN(ms)) throw new InvalidArgumentError('not a valid date');
  return new Date(ms).toISOString();
};

import { randomBytes, randomUUID } from 'node:crypto';
import type { NewEvent } from '#shared/eventStore/eventStore';

/** Events shaped like the identity stream's, so rows and JSON sizes resemble production ones. */
const metadata = (actor: string): NewEvent['metadata'] => ({
  actor,
  requestId: randomUUID(),
  correlationId: randomUUID(),
  causationId: null,
  schemaVersion: 1,
});

export function userRegistered(userId: number): NewEvent {
  return {
    id: randomUUID(),
    type: 'UserRegistered',
    data: {
      userId,
      email: `bench${userId}@example.org`,
      username: `bench${userId}`,
      firstName: 'Bench',
      lastName: `User ${userId}`,
      passwordHash: randomBytes(48).toString('base64'),
      isStaff: false,
      registeredAt: new Date().toISOString(),
    },
    metadata: metadata('system'),
  };
}

export function profileUpdated(userId: number): NewEvent {
  return {
    id: randomUUID(),
    type: 'UserProfileUpdated',
    data: {
      userId,
      bio: `Neuroanatomist, ${randomBytes(12).toString('hex')}`,
      location: 'Leipzig',
      updatedAt: new Date().toISOString(),
    },
    metadata: metadata(String(userId)),
  };
}

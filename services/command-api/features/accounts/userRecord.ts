import type { RegisteredUser } from '#shared/domain/accounts/events';
import type { UserRecord } from '#shared/views/userViews';

export const userRecordFromState = (u: RegisteredUser): UserRecord => ({
  id: u.userId,
  email: u.email,
  username: u.username,
  firstName: u.firstName,
  lastName: u.lastName,
  bio: u.bio,
  location: u.location,
  avatarKey: u.avatarKey,
  isStaff: u.isStaff,
});

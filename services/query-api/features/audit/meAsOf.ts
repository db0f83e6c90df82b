/** GET /api/auth/me/?as_of=…: the caller's account right after the last event of its stream at or before the point. */
import type { EventStore } from '#shared/eventStore/eventStore';
import { formatPosition } from '#shared/eventStore/eventStore';
import type { Reply } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { userStreamName } from '#shared/domain/accounts/events';
import { type AsOf, AS_OF_POSITION_HEADER, readUpTo } from '#shared/audit/asOf';
import { accountAt } from '#shared/audit/replay/accountReplay';

export async function meAsOfReply(
  store: EventStore,
  userId: number,
  asOf: AsOf,
  baseUrl: string,
): Promise<Reply> {
  const events = await store.readStream(userStreamName(userId), readUpTo(asOf));
  const body = accountAt(events, baseUrl);
  const newest = events.at(-1);
  if (!body || !newest) throw new NotFoundError();
  return { status: 200, body, headers: { [AS_OF_POSITION_HEADER]: formatPosition(newest.position) } };
}

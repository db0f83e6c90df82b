/**
 * Old event shapes are upcast when read, never rewritten. An upcaster takes the data of
 * (type, schemaVersion) to the next version. Applied once, where events are read
 * (shared/eventStore/upcastingEventStore.ts), so deciders and projections see the same shapes.
 */
export type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

export const UPCASTERS: ReadonlyMap<string, Upcaster> = new Map<string, Upcaster>([
  // e.g. ['UserRegistered@1', (d) => ({ ...d, isStaff: d.isStaff ?? false })]
]);

/** The event's data at the newest schema version, and that version. */
export function upcastData(
  type: string,
  schemaVersion: number,
  data: unknown,
  upcasters: ReadonlyMap<string, Upcaster> = UPCASTERS,
): { data: unknown; schemaVersion: number } {
  let current = data;
  let version = schemaVersion;
  for (let next = upcasters.get(`${type}@${version}`); next; next = upcasters.get(`${type}@${version}`)) {
    current = next(current as Record<string, unknown>);
    version += 1;
  }
  return { data: current, schemaVersion: version };
}

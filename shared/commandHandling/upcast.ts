import type { RecordedEvent } from '../eventStore/eventStore';

/**
 * Old event shapes are upcast when read, never rewritten. An upcaster takes the data of
 * (type, schemaVersion) to the next version; readers always see the current shape.
 */
type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

const upcasters = new Map<string, Upcaster>([
  // e.g. ['UserRegistered@1', (d) => ({ ...d, isStaff: d.isStaff ?? false })]
]);

export function upcast(event: RecordedEvent): { type: string; data: Record<string, unknown> } {
  let data = event.data as Record<string, unknown>;
  for (let v = event.metadata.schemaVersion; ; v++) {
    const next = upcasters.get(`${event.type}@${v}`);
    if (!next) break;
    data = next(data);
  }
  return { type: event.type, data };
}

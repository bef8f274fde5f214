import { z } from 'zod';

/** `object: "list"` envelope. Cursor-paged lists add `has_more`; the customer list adds `next_cursor`. */
export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.object({
    object: z.literal('list'),
    data: z.array(item),
    livemode: z.boolean(),
  });
}

export function cursorListEnvelope<T extends z.ZodType>(item: T) {
  return listEnvelope(item).extend({ has_more: z.boolean() });
}

export function toList<T>(data: T[], livemode: boolean) {
  return { object: 'list' as const, data, livemode };
}

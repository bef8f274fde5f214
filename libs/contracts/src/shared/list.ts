import { z } from 'zod';
import { MAX_ID_LENGTH } from './text';

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

/** A list's `limit` query parameter: an integer 1-`max`; `limit=0`, `limit=101` or `limit=abc` are a 400. */
export function limitParam(defaultLimit: number, max = 100) {
  return z.coerce.number().int().min(1).max(max).default(defaultLimit).describe(`1-${max}, default ${defaultLimit}`);
}

/** A cursor-paged list's `starting_after`: the id of the last item of the previous page; an unknown id is a 400. */
export function startingAfterParam(noun: string) {
  return z.string().min(1).max(MAX_ID_LENGTH).optional().describe(`Id of the last ${noun} of the previous page`);
}

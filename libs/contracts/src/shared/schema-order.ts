import type { z } from 'zod';

/**
 * The value with its keys in the schema's order (`object` and `id` first, as the API documents
 * them). Documents read back from jsonb come with their keys sorted by length; parsing
 * rebuilds them in shape order. A value the schema refuses is returned as it is: this only
 * orders, it never turns a readable resource into an error.
 */
export function inSchemaOrder<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : (value as T);
}

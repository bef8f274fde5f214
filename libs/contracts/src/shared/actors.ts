import { z } from 'zod';

/**
 * Who did something, as recorded in the metadata of each event and shown in a record's history
 * (docs/dashboard-api.md). The gateway names it in its signed forwarded identity.
 */
export const Actor = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('api_key'), id: z.string().min(1).describe('The API key, prefix key_') }),
    z.object({ type: z.literal('admin') }),
    z.object({ type: z.literal('dashboard_user'), id: z.string().min(1).describe('The dashboard user, prefix usr_') }),
    z.object({ type: z.literal('customer') }).describe('A buyer on a hosted page or the customer portal'),
    z.object({ type: z.literal('system') }).describe('Renewals, dunning, sweeps, consumers'),
  ])
  .meta({ id: 'Actor' });
export type Actor = z.infer<typeof Actor>;

export const SYSTEM_ACTOR: Actor = { type: 'system' };

const ACTOR_HEADER_VALUE = /^(api_key|admin|dashboard_user|customer|system)(?::([A-Za-z0-9_.:-]{1,128}))?$/;

/** The actor as one header value: `admin`, `api_key:key_...`, `dashboard_user:usr_...`. */
export function actorHeaderValue(actor: Actor): string {
  return 'id' in actor ? `${actor.type}:${actor.id}` : actor.type;
}

/** Reads `actorHeaderValue`'s form back; undefined when it is not one. */
export function actorFromHeaderValue(value: string): Actor | undefined {
  const match = ACTOR_HEADER_VALUE.exec(value);
  if (!match) return undefined;
  const parsed = Actor.safeParse(match[2] === undefined ? { type: match[1] } : { type: match[1], id: match[2] });
  return parsed.success ? parsed.data : undefined;
}

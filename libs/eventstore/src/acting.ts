import { AsyncLocalStorage } from 'node:async_hooks';
import type { Actor } from '@billing/contracts';

const acting = new AsyncLocalStorage<Actor>();

/**
 * Runs `work` (and everything it starts) on behalf of `actor`: the store records it in the
 * metadata of every event appended meanwhile. `runService` enters it once per request, from
 * the gateway's signed identity, so no command has to pass it along.
 */
export function actingAs<T>(actor: Actor, work: () => T): T {
  return acting.run(actor, work);
}

/** The actor of the work in progress; undefined outside a request (consumers, sweeps). */
export function currentActor(): Actor | undefined {
  return acting.getStore();
}

import {
  type Einvoice as EinvoiceChoice,
  type EinvoiceChoiceChangedData,
  Einvoice as EinvoiceChoiceSchema,
  einvoiceViolations,
} from '@billing/contracts';
import {
  type EventStore,
  type EventStoreTransaction,
  type SqlExecutor,
  defineAggregate,
  streamEvents,
} from '@billing/eventstore';
import type { Tenant } from '@billing/service';

/**
 * A customer's e-invoice choice for what they pay later (renewals, proration charges), on
 * `einvoice_choice-<customer id>`: the one given at their last checkout, or changed in the
 * portal. A customer who never chose gets the provider's member carrier.
 */
export type EinvoiceChoiceChanged = { type: 'EinvoiceChoiceChanged'; data: EinvoiceChoiceChangedData };
export type ChooseEinvoice = {
  type: 'ChooseEinvoice';
  data: { customerId: string; choice: EinvoiceChoice; now: Date };
};

export const einvoiceChoiceAggregate = defineAggregate({
  stream: (customerId: string) => `einvoice_choice-${customerId}`,
  events: streamEvents<EinvoiceChoiceChanged>({ EinvoiceChoiceChanged: true }),
  initialState: (): EinvoiceChoice | null => null,
  evolve: (_state: EinvoiceChoice | null, event: EinvoiceChoiceChanged) => event.data.choice,
  decide: (command: ChooseEinvoice, state: EinvoiceChoice | null): EinvoiceChoiceChanged[] => {
    if (einvoiceViolations(command.data.choice).length > 0) throw new Error('An e-invoice choice is checked before');
    if (JSON.stringify(state) === JSON.stringify(command.data.choice)) return [];
    const { customerId, choice, now } = command.data;
    return [
      { type: 'EinvoiceChoiceChanged', data: { customer_id: customerId, choice, changed_at: now.toISOString() } },
    ];
  },
});

/** The choice a checkout event carries, if it is one (events hold it as a plain record). */
export function choiceOf(value: unknown): EinvoiceChoice | null {
  const parsed = EinvoiceChoiceSchema.safeParse(value);
  return parsed.success && einvoiceViolations(parsed.data).length === 0 ? parsed.data : null;
}

export async function chooseEinvoice(
  store: EventStore,
  tx: EventStoreTransaction | null,
  tenant: Tenant,
  customerId: string,
  choice: EinvoiceChoice,
  now: Date,
): Promise<void> {
  const command: ChooseEinvoice = { type: 'ChooseEinvoice', data: { customerId, choice, now } };
  const options = { ...tenant, occurredAt: now };
  if (tx) await einvoiceChoiceAggregate.handleInTransaction(tx, store, customerId, command, options);
  else await einvoiceChoiceAggregate.handle(store, customerId, command, options);
}

/** Read with `sql`: inside a transaction, its own (PGlite has one connection). */
export async function customerChoice(store: EventStore, sql: SqlExecutor, customerId: string) {
  const stream = einvoiceChoiceAggregate.stream(customerId);
  return einvoiceChoiceAggregate.fold((await store.readStreams([stream], sql)).get(stream) ?? []);
}

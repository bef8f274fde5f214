import { defineAggregate } from '@billing/eventstore';
import { decide, evolve, initialState, invoiceEvents, invoiceStream } from './invoice';
import { projectInvoices } from './read-model';

/** The invoice aggregate: the decider its tests check, run on `invoice-<id>` with the invoices table. */
export const invoiceAggregate = defineAggregate({
  stream: invoiceStream,
  events: invoiceEvents,
  initialState,
  evolve,
  decide,
  project: projectInvoices,
});

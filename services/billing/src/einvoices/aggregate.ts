import { createHash } from 'node:crypto';
import type { Environment } from '@billing/contracts';
import { defineAggregate } from '@billing/eventstore';
import { decide, einvoiceEvents, einvoiceStream, evolve, initialState } from './einvoice';
import { projectEinvoices } from './read-model';

/** The e-invoice aggregate on `einvoice-<id>` with the einvoices table. */
export const einvoiceAggregate = defineAggregate({
  stream: einvoiceStream,
  events: einvoiceEvents,
  initialState,
  evolve,
  decide,
  project: projectEinvoices,
});

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The e-invoice of a source (a billing invoice or a checkout order) has an id made from it, so
 * that every delivery of one payment reaches one stream. Its merchant order number at the
 * provider is the id's random part (24 letters and digits, within ECPay's 30 and Amego's 40):
 * the provider refuses it twice, which makes issuing exactly once across processes.
 */
export function einvoiceIdOf(tenant: { organization: string; environment: Environment }, source: string): string {
  const digest = createHash('sha256').update(`${tenant.organization}\n${tenant.environment}\n${source}`).digest();
  let part = '';
  for (let i = 0; i < 24; i += 1) part += BASE62[digest[i]! % 62];
  return `einv_${part}`;
}

export const merchantOrderNumberOf = (einvoiceId: string) => einvoiceId.slice('einv_'.length);

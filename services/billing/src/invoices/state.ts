import type { Environment, Invoice } from '@billing/contracts';

/** An invoice's state as its stream folds it: the invoice as it is, and what was recorded on it once. */
export type InvoiceState =
  | { status: 'Empty' }
  | {
      status: 'Existing';
      invoice: Invoice;
      organization: string;
      environment: Environment;
      /** Checkout's refunds recorded on the invoice, each once. */
      refunds?: string[];
      /** The keys of the switch credits drawn from its payment, each once. */
      credits?: string[];
    };

import { InvoiceIdParams, ListInvoicesQuery, livemodeOf, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { secretCallerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { findInvoice, listInvoices } from './read-model';

/** `GET /v1/invoices` and `GET /v1/invoices/:id` (Secret Key). */
export function mountInvoiceRoutes(app: Express, { store }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  app.get('/v1/invoices', validate({ query: ListInvoicesQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { invoices, hasMore } = await listInvoices(db, schema, caller, res.locals.input.query);
    res.json({ object: 'list', data: invoices, has_more: hasMore, livemode: livemodeOf(caller.environment) });
  });

  app.get('/v1/invoices/:id', validate({ params: InvoiceIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const invoice = await findInvoice(db, schema, caller, id);
    if (!invoice) throw notFound(`No such invoice: ${id}`);
    res.json(invoice);
  });
}

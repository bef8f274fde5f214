import type { SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { nextInvoiceNumbers } from './read-model';

/** Records one invoice, given the number it gets. */
export type NumberedInvoice = (number: string) => Promise<void>;

/**
 * The invoices a consumer's transaction opens, recorded as its last work, their numbers taken
 * at once per organization (`nextInvoiceNumbers`). A number's row stays locked from the moment
 * it is taken until the commit: taken first, it made every provisioning transaction of an
 * organization wait for the whole of the one before it (customer, subscription, e-invoice
 * request and all), so that an organization's paid checkouts were provisioned one transaction at
 * a time however many partitions the bus gave; taken last, they wait only for its invoices and
 * its commit. Numbers stay gapless and in commit order. Organizations are taken in one order
 * (sorted), so two transactions never hold one row each while waiting for the other's.
 */
export class InvoicesNumberedAtEnd {
  private pending: Array<{ tenant: Tenant; record: NumberedInvoice }> = [];

  constructor(private readonly schema: string) {}

  add(tenant: Tenant, record: NumberedInvoice): void {
    this.pending.push({ tenant, record });
  }

  /** Numbers and records every invoice added since the last call, in the order added per organization. */
  async record(sql: SqlExecutor): Promise<void> {
    const byTenant = new Map<string, Array<{ tenant: Tenant; record: NumberedInvoice }>>();
    for (const invoice of this.pending) {
      const key = `${invoice.tenant.organization}\u0000${invoice.tenant.environment}`;
      const invoices = byTenant.get(key) ?? [];
      invoices.push(invoice);
      byTenant.set(key, invoices);
    }
    this.pending = [];
    for (const key of [...byTenant.keys()].sort()) {
      const invoices = byTenant.get(key)!;
      const numbers = await nextInvoiceNumbers(sql, this.schema, invoices[0]!.tenant, invoices.length);
      for (const [i, invoice] of invoices.entries()) await invoice.record(numbers[i]!);
    }
  }
}

import type { DashboardPage, PageContext } from '../page';
import { couponsPage, promotionCodePage } from './coupons';
import { customerPage, customersPage, sendCustomersCsv } from './customers';
import { einvoicePage, einvoicesPage } from './einvoices';
import { emailPage, emailsPage } from './emails';
import { eventPage, eventsPage } from './events';
import { invoicePage } from './invoices';
import { invoicesPage, sendInvoicesCsv } from './invoice-list';
import { overviewPage } from './overview';
import { paymentLinksPage } from './payment-links';
import { paymentsPage, sendPaymentsCsv } from './payments';
import { productPage, productsPage } from './products';
import { apiKeysPage, settingsPage } from './settings';
import { connectedAppsPage } from './connected-apps';
import { refundsPage, sendRefundsCsv } from './refunds';
import { sendSubscriptionsCsv, subscriptionPage, subscriptionsPage } from './subscriptions';
import { teamPage } from './team';
import { testClockPage, testClocksPage } from './test-clocks';
import { searchPage } from './search';
import { webhookPage, webhooksPage } from './webhooks';

export const PAGES: DashboardPage[] = [
  overviewPage,
  productsPage,
  productPage,
  couponsPage,
  promotionCodePage,
  paymentLinksPage,
  customersPage,
  customerPage,
  paymentsPage,
  invoicesPage,
  refundsPage,
  subscriptionsPage,
  subscriptionPage,
  invoicePage,
  einvoicesPage,
  einvoicePage,
  webhooksPage,
  webhookPage,
  eventsPage,
  eventPage,
  emailsPage,
  emailPage,
  apiKeysPage,
  settingsPage,
  connectedAppsPage,
  testClocksPage,
  testClockPage,
  teamPage,
  searchPage,
];

/** The lists' CSV exports, each at `<base>/<name>` with the list's filters (lists.ts). */
export const CSV_EXPORTS: Record<string, (ctx: PageContext) => Promise<void>> = {
  'payments.csv': sendPaymentsCsv,
  'invoices.csv': sendInvoicesCsv,
  'refunds.csv': sendRefundsCsv,
  'customers.csv': sendCustomersCsv,
  'subscriptions.csv': sendSubscriptionsCsv,
};

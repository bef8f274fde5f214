import type { DashboardPage } from '../page';
import { couponsPage, promotionCodePage } from './coupons';
import { customerPage, customersPage } from './customers';
import { einvoicePage, einvoicesPage } from './einvoices';
import { emailPage, emailsPage } from './emails';
import { invoicePage } from './invoices';
import { overviewPage } from './overview';
import { paymentLinksPage } from './payment-links';
import { paymentsPage } from './payments';
import { productPage, productsPage } from './products';
import { apiKeysPage, settingsPage } from './settings';
import { subscriptionPage, subscriptionsPage } from './subscriptions';
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
  subscriptionsPage,
  subscriptionPage,
  invoicePage,
  einvoicesPage,
  einvoicePage,
  webhooksPage,
  webhookPage,
  emailsPage,
  emailPage,
  apiKeysPage,
  settingsPage,
  testClocksPage,
  testClockPage,
  teamPage,
  searchPage,
];

export { checkoutService } from './service';
export { expireDueSessions } from './sessions/expiry';
export { TEST_CARDS } from './payments/sandbox';
export { BILLING_TOPIC, DUPLICATE_SUBSCRIPTION_PAID } from './sessions/billing-consumer';

export { checkoutService } from './service';
export { expireDueSessions } from './sessions/expiry';
export { TEST_CARDS } from './payments/sandbox';

export { checkoutService } from './service';
export { expireDueSessions } from './sessions/expiry';
export { TEST_CARDS } from './payments/sandbox';
export { BILLING_TOPIC, DUPLICATE_SUBSCRIPTION_PAID } from './sessions/billing-consumer';
/** ECPay's endpoints as its documents describe them, for tests and for a Sandbox pointed at them (docs/payments.md). */
export { startEcpayEmulator, type EcpayEmulator } from './payments/ecpay/emulator';
export { ECPAY_STAGING_MERCHANT } from './payments/ecpay/merchant';
export { hasValidCheckMac } from './payments/ecpay/check-mac';
/** PAYUNi's endpoints and card-field script as its SDKs and integrations use them, for tests and a Sandbox pointed at them. */
export { startPayuniEmulator, type PayuniEmulator } from './payments/payuni/emulator';
export { payuniTradeNo } from './payments/payuni/upp';

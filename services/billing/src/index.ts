export { billingService } from './service';
export { type DefaultPaymentMethodSet, setDefaultPaymentMethod } from './customers/payment-method';

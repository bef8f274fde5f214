export { billingService } from './service';
export { type DefaultPaymentMethodSet, setDefaultPaymentMethod } from './customers/payment-method';
export { cancelSchedule, getSchedule, performSwitch, previewSwitch } from './switching/perform';

export { billingService } from './service';
export { type DefaultPaymentMethodSet, setDefaultPaymentMethod } from './customers/payment-method';
export { performSwitch, previewSwitch } from './engine/switching/perform';
export { cancelSchedule, getSchedule } from './engine/switching/schedules';

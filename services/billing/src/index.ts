export { billingService } from './service';
export { type DefaultPaymentMethodSet, setDefaultPaymentMethod } from './engine/renewals/new-card';
export { performSwitch, previewSwitch } from './engine/switching/perform';
export { cancelSchedule, getSchedule } from './engine/switching/schedules';

export { billingService } from './service';
export { cancelSchedule, getSchedule, performSwitch, previewSwitch } from './switching/perform';

export { billingService } from './service';

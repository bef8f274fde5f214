export { checkoutService } from './service';

export { promotionsService } from './service';

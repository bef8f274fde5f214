export { gatewayService } from './service';

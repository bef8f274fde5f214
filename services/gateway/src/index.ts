export { createGatewayService } from './service';
export { DEFAULT_UPSTREAMS } from './gateway';

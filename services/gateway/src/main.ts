import { runStandalone } from '@billing/runtime';
import { gatewayService } from './service';

runStandalone(gatewayService).catch((error) => {
  console.error(error);
  process.exit(1);
});

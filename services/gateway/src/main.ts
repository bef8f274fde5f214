import { runStandalone } from '@billing/runtime';
import { createGatewayService } from './service';

runStandalone(createGatewayService()).catch((error) => {
  console.error(error);
  process.exit(1);
});

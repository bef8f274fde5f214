import { runStandalone } from '@billing/runtime';
import { checkoutService } from './service';

runStandalone(checkoutService).catch((error) => {
  console.error(error);
  process.exit(1);
});

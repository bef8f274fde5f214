import { runStandalone } from '@billing/runtime';
import { billingService } from './service';

runStandalone(billingService).catch((error) => {
  console.error(error);
  process.exit(1);
});

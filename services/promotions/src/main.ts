import { runStandalone } from '@billing/runtime';
import { promotionsService } from './service';

runStandalone(promotionsService).catch((error) => {
  console.error(error);
  process.exit(1);
});

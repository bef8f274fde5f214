import { runStandalone } from '@billing/runtime';
import { catalogService } from './service';

runStandalone(catalogService).catch((error) => {
  console.error(error);
  process.exit(1);
});

import { runStandalone } from '@billing/runtime';
import { notificationsService } from './service';

runStandalone(notificationsService).catch((error) => {
  console.error(error);
  process.exit(1);
});

export { notificationsService } from './service';

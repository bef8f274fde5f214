export { notificationsService, schedulerOf } from './service';
export { signWebhook } from './deliveries/sign';
export { toWebhookEvent } from './events/to-webhook-event';

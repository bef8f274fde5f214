export { createNotificationsService, type NotificationsOptions, notificationsService, schedulerOf } from './service';
export type { Resolve, ResolvedAddress } from './deliveries/send';
export { signWebhook } from './deliveries/sign';
export { toWebhookEvent } from './events/to-webhook-event';

import { randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` and the base64 of the HMAC key (24 random bytes). */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

import type { Customer } from '@billing/contracts';
import { InternalClient, type ServiceContext, findMerchant, positiveNumberSetting } from '@billing/runtime';
import type { PageLanguage } from '@billing/service';
import { type PortalLink, type Recipient, composeEmail } from './compose';
import {
  type EmailOutcome,
  type EmailRow,
  buyerLocale,
  claimDueEmails,
  markInterrupted,
  orderBuyer,
  recordOutcome,
} from './outbox';
import { type EmailTransport, smtpTransport } from './transport';

/** Attempts of an email the SMTP server refused for now (4xx, unreachable), then FAILED. */
export const MAX_EMAIL_ATTEMPTS = 6;
/** Wait before attempt n + 1: 1, 2, 4, 8, 16 minutes. */
export const emailRetryDelayMs = (attempts: number) => 60_000 * 2 ** (attempts - 1);
/**
 * How long a claimed email stays its sender's; past it, an unrecorded one is INTERRUPTED. A
 * claim's emails go one after the other, each bounded by the SMTP timeouts (`transport.ts`) and
 * the calls to billing: a batch of `BATCH` takes far less than this.
 */
export const EMAIL_LEASE_MS = 15 * 60_000;
const DEFAULT_POLL_MS = 1000;
const BATCH = 5;
/** The language of a buyer whose checkout did not say one: most buyers are in Taiwan. */
export const DEFAULT_EMAIL_LOCALE: PageLanguage = 'zh-TW';

export interface EmailSender {
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Sends the outbox's due emails: claims them (committed before anything leaves), finds the
 * buyer (billing's customer, or a one-time order's buyer) and the merchant, writes the email in
 * the buyer's language and hands it to SMTP, or keeps it in the mailbox: in Sandbox (unless
 * `SANDBOX_EMAILS=send`) and when no `SMTP_URL` is set.
 */
export function startEmailSender(context: ServiceContext): EmailSender {
  const { store, config, now, internalSecret } = context;
  const schema = store.tables.schema;
  const transport: EmailTransport | null = config.SMTP_URL ? smtpTransport(config.SMTP_URL) : null;
  const sendsSandbox = config.SANDBOX_EMAILS === 'send';
  // An empty setting (docker-compose's default) is no setting.
  const fromAddress = config.EMAIL_FROM_ADDRESS || 'no-reply@localhost';
  const pollMs = positiveNumberSetting(config, 'EMAIL_POLL_MS', DEFAULT_POLL_MS);
  let billing: InternalClient | null = null;
  const billingClient = () =>
    (billing ??= config.BILLING_SERVICE_URL
      ? new InternalClient({
          name: 'billing',
          baseUrl: config.BILLING_SERVICE_URL,
          secret: internalSecret,
          timeoutMs: positiveNumberSetting(config, 'INTERNAL_CALL_TIMEOUT_MS', 1500),
        })
      : null);

  const billingFor = (email: EmailRow) => {
    const client = billingClient();
    if (!client) throw new Error('BILLING_SERVICE_URL is not set');
    const caller = {
      organization: email.organization,
      environment: email.environment,
      keyKind: 'secret' as const,
      keyId: 'notifications',
    };
    return { client, caller };
  };

  /** A portal session made for this email, opening on the card page (billing's, for a week). */
  const portalLinkFor = async (email: EmailRow, recipient: Recipient): Promise<PortalLink | null> => {
    if (!email.customer_id) return null;
    const { client, caller } = billingFor(email);
    const { status, body } = await client.post<PortalLink>(
      '/internal/portal/sessions/for-email',
      { customer_id: email.customer_id, locale: recipient.locale },
      caller,
    );
    if (status !== 201) throw new Error(`billing answered ${status} to a portal link`);
    return body;
  };

  const recipientOf = async (email: EmailRow): Promise<Recipient | null> => {
    if (email.customer_id) {
      const { client, caller } = billingFor(email);
      const { status, body } = await client.get<Customer>(
        `/v1/customers/${encodeURIComponent(email.customer_id)}`,
        caller,
      );
      if (status === 404) return null;
      if (status !== 200) throw new Error(`billing answered ${status}`);
      const locale = email.locale ?? (await buyerLocale(store.database, schema, email, body.email));
      return { email: body.email, name: body.name, locale: locale ?? DEFAULT_EMAIL_LOCALE };
    }
    const buyer = email.order_id ? await orderBuyer(store.database, schema, email) : null;
    const address = email.to_address ?? buyer?.email;
    if (!address) return null;
    return { email: address, name: null, locale: email.locale ?? buyer?.locale ?? DEFAULT_EMAIL_LOCALE };
  };

  const deliver = async (email: EmailRow): Promise<EmailOutcome> => {
    let recipient: Recipient | null;
    try {
      recipient = await recipientOf(email);
    } catch (error) {
      // Nothing left: finding the buyer failed, so the email waits for another try.
      return retryOrFail(email, `Could not find the buyer: ${(error as Error).message}`);
    }
    if (!recipient) return { status: 'SKIPPED', error: 'No buyer to write to' };
    const merchant = (await findMerchant(store.database, schema, email.organization)) ?? {
      name: email.organization,
      logo_url: null,
      brand_color: null,
      website_url: null,
    };
    const portal = email.kind === 'payment_failed' ? await portalLinkFor(email, recipient) : null;
    const composed = composeEmail(email.kind, email.facts, recipient, merchant, portal);
    const written = { to: recipient.email, locale: recipient.locale, ...composed, at: now() };
    if (!transport || (email.environment === 'SANDBOX' && !sendsSandbox)) return { status: 'KEPT', ...written };
    const handover = await transport.send({
      from: { name: merchant.name, address: fromAddress },
      to: recipient.email,
      messageId: `<${email.id}@billing>`,
      ...composed,
    });
    if (handover.outcome === 'accepted') return { status: 'SENT', ...written, at: now() };
    if (handover.outcome === 'unknown') return { status: 'INTERRUPTED', error: handover.error, to: recipient.email };
    if (handover.permanent) return { status: 'FAILED', error: handover.error, to: recipient.email };
    return retryOrFail(email, handover.error, recipient.email);
  };

  const retryOrFail = (email: EmailRow, error: string, to?: string): EmailOutcome =>
    email.attempts >= MAX_EMAIL_ATTEMPTS
      ? { status: 'FAILED', error, to }
      : { status: 'QUEUED', error, retryAt: new Date(now().getTime() + emailRetryDelayMs(email.attempts)), to };

  const sendDue = async () => {
    await markInterrupted(store.database, schema, now());
    for (;;) {
      const at = now();
      const claimed = await claimDueEmails(store.database, schema, at, new Date(at.getTime() + EMAIL_LEASE_MS), BATCH);
      for (const email of claimed) {
        // `deliver` throws only before the hand-over (it returns what SMTP answered): nothing left.
        const outcome = await deliver(email).catch((error: unknown) => retryOrFail(email, (error as Error).message));
        await recordOutcome(store.database, schema, email.id, outcome);
      }
      if (claimed.length < BATCH) return;
    }
  };

  let running: Promise<void> = Promise.resolve();
  let again = false;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    again = true;
    running = running.then(async () => {
      if (!again || stopped) return;
      again = false;
      await sendDue().catch((error: unknown) => context.logger.error({ err: error }, 'email sender failed'));
    });
  };
  const timer = setInterval(run, pollMs);
  timer.unref();
  return {
    wake: run,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
      transport?.close();
      billing?.close();
    },
  };
}

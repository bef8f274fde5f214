import { randomUUID } from 'node:crypto';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CheckoutSession,
  type DomainEventEnvelope,
  type Environment,
  type KeyKind,
  newId,
} from '@billing/contracts';
import type { ServiceUnderTest } from '@billing/runtime';
import { admin, callService, caller } from '@billing/testing';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';

export { type Reply, newOrg } from '@billing/testing';

/** Calls the service under test: as the gateway's admin API, or with a (Secret) key's identity. */
export function client(running: () => ServiceUnderTest) {
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    callService(running().service.url, method, path, headers, body);
  return {
    call,
    admin: (organization: string, method: string, path: string, body?: unknown) =>
      call(method, `/admin${path}`, admin(organization), body),
    get: (path: string, organization: string, environment: Environment = 'SANDBOX', keyKind: KeyKind = 'secret') =>
      call('GET', `/v1${path}`, caller(organization, environment, keyKind)),
  };
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A merchant's endpoint on loopback. Each path answers with the status its `answer` gives
 * (200 unless set); `hang` paths never answer; `hold` paths answer when `release` is called.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const answers = new Map<string, number | 'hang' | 'hold'>();
  const held: Array<{ path: string; respond: (status: number) => void }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers.get(path) ?? 200;
      const respond = (status: number) => res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      if (answer === 'hang') return;
      if (answer === 'hold') held.push({ path, respond });
      else respond(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    answer: (path: string, status: number | 'hang' | 'hold') => answers.set(path, status),
    /** Answers the held requests of `path` with `status`, and later ones too. */
    release: (path: string, status: number) => {
      answers.set(path, status);
      const releasing = held.filter((h) => h.path === path);
      held.splice(0, held.length, ...held.filter((h) => h.path !== path));
      for (const request of releasing) request.respond(status);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Verifies a request as a merchant would, with the standard library; throws when it fails. */
export function verified(secret: string, request: Received): any {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

let position = 1;
/** An envelope as another service's relay publishes it, under the public type. */
export function envelope(
  type: string,
  organization: string,
  data: Record<string, unknown>,
  environment: Environment = 'SANDBOX',
  occurredAt = new Date(),
): DomainEventEnvelope {
  const object = data.object as { id?: string } | undefined;
  return {
    id: randomUUID(),
    type,
    schema_version: 1,
    stream: `resource-${object?.id ?? randomUUID()}`,
    stream_version: 1,
    global_position: position++,
    occurred_at: occurredAt.toISOString(),
    organization,
    environment,
    data,
  };
}

/** A completed checkout session from a payment link, as checkout's `object` shows it. */
export function completedSession(overrides: Partial<CheckoutSession> = {}): CheckoutSession {
  const id = newId('checkoutSession');
  return {
    object: 'checkout.session',
    id,
    status: 'COMPLETE',
    mode: 'SUBSCRIPTION',
    customer_id: 'cus_buyer',
    customer_email: 'buyer@example.com',
    customer_name: 'Buyer',
    external_customer_id: null,
    order_id: newId('order'),
    subscription_id: newId('subscription'),
    payment_intent_id: newId('paymentIntent'),
    setup_intent_id: null,
    amount_subtotal: 299,
    amount_total: 299,
    currency: 'TWD',
    discount: null,
    allow_promotion_codes: false,
    product: { id: newId('product'), name: 'Pro' },
    metadata: { ref: 'newsletter', utm_source: 'mail', utm_campaign: 'launch' },
    expires_at: '2026-11-21T08:30:00.000Z',
    created_at: '2026-11-21T08:00:00.000Z',
    completed_at: '2026-11-21T08:05:00.000Z',
    livemode: false,
    ...overrides,
  };
}

export async function publish(running: ServiceUnderTest, topic: string, ...events: DomainEventEnvelope[]) {
  await running.infrastructure.bus.publish(
    topic,
    events.map((value) => ({ key: value.stream, value })),
  );
}

/** An SMTP server that accepts, or answers every message with `reply` (a code and text). */
export async function smtpServer() {
  const received: string[] = [];
  let reply: { code: number; text: string } | null = null;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (reply) return callback(Object.assign(new Error(reply.text), { responseCode: reply.code }));
        received.push(Buffer.concat(chunks).toString('utf8'));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    answer: (next: typeof reply) => void (reply = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
export type SmtpServer = Awaited<ReturnType<typeof smtpServer>>;

import { type Environment, IDENTITY_HEADERS, type KeyKind, identityHeaders, newId } from '@billing/contracts';

export interface Reply {
  status: number;
  body: any;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Reply> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export const newOrg = () => newId('organization');

/** What the gateway sets for a public request made with an API key. */
export const caller = (organization: string, environment: Environment = 'SANDBOX', keyKind: KeyKind = 'secret') =>
  identityHeaders({ organization, environment, keyKind, keyId: 'key_test' });
export const admin = (organization: string) => ({ [IDENTITY_HEADERS.organization]: organization });

export const ebook = (fields: Record<string, unknown> = {}) => ({
  environment: 'SANDBOX',
  name: 'E-book',
  type: 'ONE_TIME',
  price: 300,
  ...fields,
});
export const monthly = (fields: Record<string, unknown> = {}) => ({
  environment: 'SANDBOX',
  name: 'Pro monthly',
  type: 'SUBSCRIPTION',
  interval: 'month',
  price: 299,
  ...fields,
});

export const urls = {
  success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
  cancel_url: 'https://shop.example/cart',
};

export const card = (card_number = '4242424242424242', fields: Record<string, unknown> = {}) => ({
  card_number,
  exp: '12/34',
  cvc: '123',
  ...fields,
});

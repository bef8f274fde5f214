/** Admin-API product bodies and session URLs that checkout tests sell with. */
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

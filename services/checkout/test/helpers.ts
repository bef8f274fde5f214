export {
  type Reply,
  admin,
  callService as call,
  caller,
  ebook,
  monthly,
  newOrg,
  signedFetch,
  urls,
} from '@billing/testing';

export const card = (card_number = '4242424242424242', fields: Record<string, unknown> = {}) => ({
  card_number,
  exp: '12/34',
  cvc: '123',
  ...fields,
});

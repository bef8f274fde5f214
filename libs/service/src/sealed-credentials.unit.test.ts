import { randomBytes } from 'node:crypto';
import {
  CredentialsUnreadable,
  EINVOICE_CREDENTIALS,
  credentialsKeyOf,
  openCredentials,
  sealCredentials,
} from './sealed-credentials';

const secret = 'an-internal-secret-of-enough-length-000';

describe('provider credentials at rest', () => {
  it('seals so that nothing of the credentials shows, and opens them again', () => {
    const key = credentialsKeyOf({}, secret);
    const sealed = sealCredentials({ hash_key: 'pwFHCqoQZGmho4w6', hash_iv: 'EkRm7iFT261dpevs' }, key);
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(sealed).not.toContain('pwFHCqoQZGmho4w6');
    expect(sealCredentials({ a: 'b' }, key)).not.toBe(sealCredentials({ a: 'b' }, key));
    expect(openCredentials(sealed, key)).toEqual({ hash_key: 'pwFHCqoQZGmho4w6', hash_iv: 'EkRm7iFT261dpevs' });
  });

  it('uses PROCESSOR_CREDENTIALS_KEY when set, and refuses one of the wrong length', () => {
    const given = randomBytes(32).toString('base64');
    expect(credentialsKeyOf({ PROCESSOR_CREDENTIALS_KEY: given }, secret).key).toEqual(Buffer.from(given, 'base64'));
    expect(() => credentialsKeyOf({ PROCESSOR_CREDENTIALS_KEY: 'c2hvcnQ=' }, secret)).toThrow('32 bytes');
  });

  it('derives another key for e-invoice credentials, which open nothing sealed for processors', () => {
    const processors = credentialsKeyOf({}, secret);
    const einvoices = credentialsKeyOf({}, secret, EINVOICE_CREDENTIALS);
    expect(einvoices.id).not.toBe(processors.id);
    expect(() => openCredentials(sealCredentials({ a: 'b' }, processors), einvoices)).toThrow(/another key/);
    const given = randomBytes(32).toString('base64');
    expect(credentialsKeyOf({ EINVOICE_CREDENTIALS_KEY: given }, secret, EINVOICE_CREDENTIALS).key).toEqual(
      Buffer.from(given, 'base64'),
    );
  });

  it('refuses a value sealed under another key, or altered, saying so', () => {
    const key = credentialsKeyOf({}, secret);
    const sealed = sealCredentials({ a: 'b' }, key);
    expect(() => openCredentials(sealed, credentialsKeyOf({}, `${secret}-rotated`))).toThrow(/another key/);
    const parts = sealed.split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => openCredentials(parts.join('.'), key)).toThrow(CredentialsUnreadable);
  });
});

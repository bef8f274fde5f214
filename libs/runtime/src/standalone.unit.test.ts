import { DEFAULT_SERVICE_URLS, standaloneConfig } from './standalone';

describe('standaloneConfig', () => {
  it('finds the other services at their default ports when the environment does not name them', () => {
    const config = standaloneConfig({ PORT: '4102' });
    expect(config).toMatchObject({ PORT: '4102', BILLING_SERVICE_URL: 'http://127.0.0.1:4103' });
    expect(Object.keys(DEFAULT_SERVICE_URLS).every((name) => config[name]?.startsWith('http://127.0.0.1:41'))).toBe(
      true,
    );
  });

  it('lets the environment name them', () => {
    expect(standaloneConfig({ BILLING_SERVICE_URL: 'http://billing:4103' }).BILLING_SERVICE_URL).toBe(
      'http://billing:4103',
    );
  });
});

import {
  STRICT_POLICY,
  type TargetPolicy,
  checkResolved,
  checkTarget,
  classifyAddress,
  classifyName,
  targetPolicyFromConfig,
} from './address-policy';

const SANDBOX_ALLOWED: TargetPolicy = { privateTargetsAllowedIn: ['SANDBOX'] };

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fec0::1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.254', 'shared'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['febf::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378::1', 'reserved'],
    ['100::1', 'reserved'],
    // IPv6 forms that carry an IPv4 address are judged by it.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a9fe:a9fe::', 'metadata'],
    ['::ffff:8.8.8.8', 'reserved'],
  ])('%s is %s', (address, kind) => expect(classifyAddress(address)).toBe(kind));

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700::1111',
    '64:ff9b::808:808',
  ])('%s is public', (address) => expect(classifyAddress(address)).toBeUndefined());

  it('treats anything that is not an address as reserved', () => {
    expect(classifyAddress('example.com')).toBe('reserved');
  });
});

describe('classifyName', () => {
  it.each([
    ['localhost', 'loopback'],
    ['LOCALHOST.', 'loopback'],
    ['api.localhost', 'loopback'],
    ['metadata', 'metadata'],
    ['metadata.google.internal', 'metadata'],
    ['metadata.google.internal.', 'metadata'],
    ['instance-data.ec2.internal', 'metadata'],
    ['redis', 'internal_name'],
    ['catalog', 'internal_name'],
    ['db.internal', 'internal_name'],
    ['printer.local', 'internal_name'],
    ['nas.home.arpa', 'internal_name'],
  ])('%s is %s', (name, kind) => expect(classifyName(name)).toBe(kind));

  it.each(['shop.example', 'hooks.example.com', 'internal.example.com'])('%s is left to its addresses', (name) =>
    expect(classifyName(name)).toBeUndefined(),
  );
});

describe('checkTarget: the URL as registered', () => {
  const check = (url: string, environment: 'SANDBOX' | 'PRODUCTION' = 'PRODUCTION', policy = STRICT_POLICY) =>
    checkTarget(new URL(url), environment, policy);

  it('accepts https to a public name or address', () => {
    expect(check('https://shop.example/hooks')).toBeUndefined();
    expect(check('https://8.8.8.8/hooks')).toBeUndefined();
    expect(check('https://[2606:4700::1111]/hooks')).toBeUndefined();
  });

  it.each([
    ['https://127.0.0.1/h', 'loopback'],
    ['https://localhost:8443/h', 'loopback'],
    ['https://[::1]/h', 'loopback'],
    ['https://10.0.0.5/h', 'private'],
    ['https://192.168.0.10/h', 'private'],
    ['https://172.20.1.1/h', 'private'],
    ['https://100.64.1.1/h', 'shared'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'metadata'],
    ['https://metadata/computeMetadata/v1/', 'metadata'],
    ['https://[fe80::1]/h', 'link_local'],
    ['https://[fd00::1]/h', 'unique_local'],
    ['https://0.0.0.0/h', 'unspecified'],
    ['https://[::]/h', 'unspecified'],
    ['https://[::ffff:127.0.0.1]/h', 'loopback'],
    ['https://[::ffff:a9fe:a9fe]/h', 'metadata'],
    ['https://224.0.0.1/h', 'multicast'],
    ['https://255.255.255.255/h', 'broadcast'],
    ['https://catalog:4101/h', 'internal_name'],
    // Other spellings of 127.0.0.1 and 169.254.169.254: decimal, octal, hex, short forms.
    ['https://2130706433/h', 'loopback'],
    ['https://017700000001/h', 'loopback'],
    ['https://0x7f000001/h', 'loopback'],
    ['https://0x7f.0.0.1/h', 'loopback'],
    ['https://0177.0.0.01/h', 'loopback'],
    ['https://127.1/h', 'loopback'],
    ['https://127.0.0.1./h', 'loopback'],
    ['https://0/h', 'unspecified'],
    ['https://2852039166/h', 'metadata'],
    ['https://0xa9.0xfe.0xa9.0xfe/h', 'metadata'],
    ['https://0251.0376.0251.0376/h', 'metadata'],
    ['https://169.254.43518/h', 'metadata'],
  ])('refuses %s in Production (%s)', (url, kind) => {
    expect(check(url)).toMatchObject({ kind });
  });

  it('refuses the same in Sandbox unless the operator allows private targets', () => {
    expect(check('https://127.0.0.1/h', 'SANDBOX')).toMatchObject({ kind: 'loopback' });
    expect(check('http://localhost:3000/h', 'SANDBOX')).toMatchObject({ kind: 'loopback' });
    expect(check('http://127.0.0.1:3000/h', 'SANDBOX', SANDBOX_ALLOWED)).toBeUndefined();
    expect(check('http://localhost:3000/h', 'SANDBOX', SANDBOX_ALLOWED)).toBeUndefined();
    expect(check('https://10.0.0.5/h', 'SANDBOX', SANDBOX_ALLOWED)).toBeUndefined();
    expect(check('http://[::1]:3000/h', 'SANDBOX', SANDBOX_ALLOWED)).toBeUndefined();
  });

  it('never allows metadata, link-local, 0.0.0.0 or Production, whatever the setting', () => {
    for (const url of [
      'https://169.254.169.254/',
      'http://169.254.169.254/',
      'https://metadata.google.internal/',
      'https://169.254.1.1/',
      'https://0.0.0.0/',
      'https://224.0.0.1/',
    ]) {
      expect(check(url, 'SANDBOX', SANDBOX_ALLOWED)).toBeDefined();
    }
    expect(check('http://127.0.0.1:3000/h', 'PRODUCTION', SANDBOX_ALLOWED)).toMatchObject({ kind: 'loopback' });
  });

  it('takes http only to allowed private targets', () => {
    expect(check('http://shop.example/h')).toMatchObject({ kind: 'scheme', reason: 'must use https' });
    expect(check('http://shop.example/h', 'SANDBOX', SANDBOX_ALLOWED)).toMatchObject({ kind: 'scheme' });
  });
});

describe('checkResolved: the addresses a name resolves to when sending', () => {
  it('refuses a name when any of its addresses is internal', () => {
    expect(checkResolved('hooks.example', ['8.8.8.8'], 'PRODUCTION', STRICT_POLICY)).toBeUndefined();
    expect(checkResolved('hooks.example', ['127.0.0.1'], 'PRODUCTION', STRICT_POLICY)).toEqual({
      kind: 'loopback',
      reason: 'hooks.example resolves to a loopback address',
    });
    expect(checkResolved('hooks.example', ['8.8.8.8', '10.0.0.1'], 'PRODUCTION', STRICT_POLICY)).toMatchObject({
      kind: 'private',
    });
    expect(checkResolved('hooks.example', ['::ffff:169.254.169.254'], 'SANDBOX', SANDBOX_ALLOWED)).toMatchObject({
      kind: 'metadata',
    });
    expect(checkResolved('hooks.example', [], 'PRODUCTION', STRICT_POLICY)).toBeDefined();
  });

  it('lets Sandbox reach private addresses when the operator allows it', () => {
    expect(checkResolved('dev.example', ['127.0.0.1'], 'SANDBOX', SANDBOX_ALLOWED)).toBeUndefined();
    expect(checkResolved('dev.example', ['127.0.0.1'], 'SANDBOX', STRICT_POLICY)).toBeDefined();
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
  it('is off unless set to sandbox, and refuses anything else', () => {
    expect(targetPolicyFromConfig({})).toEqual(STRICT_POLICY);
    expect(targetPolicyFromConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'none' })).toEqual(STRICT_POLICY);
    expect(targetPolicyFromConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' })).toEqual(SANDBOX_ALLOWED);
    expect(() => targetPolicyFromConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'production' })).toThrow(/sandbox/);
    expect(() => targetPolicyFromConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })).toThrow();
  });
});

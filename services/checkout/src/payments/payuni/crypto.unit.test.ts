import {
  PayuniCipherError,
  decryptInfo,
  encryptInfo,
  hasValidHashInfo,
  hashInfo,
  open,
  phpQueryString,
  seal,
} from './crypto';

/** The placeholder keys of PAYUNi's SDK READMEs and examples (payuni/PHP_SDK, payuni/NET_SDK). */
const KEYS = { hashKey: '12345678901234567890123456789012', hashIV: '1234567890123456' };

/**
 * A UPP request in the shape of payuni/PHP_SDK's examples/payment/Payment.php, with a product
 * description that holds every character PHP's and JavaScript's URL encoders disagree on.
 */
const FIELDS = {
  MerID: 'abc',
  MerTradeNo: 'test20220829111528',
  TradeAmt: '100',
  Timestamp: '1661742928',
  ProdDesc: 'Pro 月方案 & (年繳)*~',
  ReturnURL: 'http://www.test.com.tw/api/return',
  NotifyURL: 'http://www.test.com.tw/api/notify',
};

/**
 * What PAYUNi's PHP SDK gives for FIELDS: its Encrypt and HashInfo lines
 * (openssl_encrypt(http_build_query(...), 'aes-256-gcm', key, 0, iv, $tag), bin2hex(ct . ':::' .
 * base64(tag)), strtoupper(sha256(key . EncryptInfo . iv))) run in PHP 8.2.36 with OpenSSL 3.0.
 * Computed here, not published by PAYUNi: no published EncryptInfo or HashInfo was found.
 */
const PHP_ENCRYPT_INFO =
  '47396636346f66736651655867396942344f587a3775696b34752b59714c5950303367585a354b70334666706d4d5156694e5450566846727837516e446a52794a4c5759554c69767347452f3967695a4f5232346e756365764873576b7a50456f735376554c797265594b4f465a47452f666f6c53304338792f6f535865384964573445744f7a4d73366b6c7936546b36573333355579436b4f5a67715358516e34743345505a534a743875764d69546e6a702f757933366c76736874346a525030666d436639645a6f394e65394148396370426e47793137466d527a2b4e4241754a3974746b37394864463555576f3557593746475564737a5954582b2f535563374e67585964666c452f7678594d757763686f614d51674c6b6f636a4e755434686533386f656a476d49545363525a737a684f586c564b754e6b4d4c6f3052645471336b52656b3563694842473872656b724846593d3a3a3a62337777704364446b4d4843394463555255765337513d3d';
const PHP_HASH_INFO = '9DA5FA9A8B73318EC45ACB3F824016C3B3505CF093A70F84A0D68E189D6C1E5A';

describe('PAYUNi EncryptInfo and HashInfo', () => {
  it("writes the query string as PHP's http_build_query does", () => {
    expect(phpQueryString({ a: "x y!'()*~-_.", b: '&=' })).toBe('a=x+y%21%27%28%29%2A%7E-_.&b=%26%3D');
  });

  it("given the SDK example's fields and keys, gives the PHP SDK's EncryptInfo and HashInfo byte for byte", () => {
    expect(encryptInfo(FIELDS, KEYS)).toBe(PHP_ENCRYPT_INFO);
    expect(hashInfo(PHP_ENCRYPT_INFO, KEYS)).toBe(PHP_HASH_INFO);
  });

  it("decrypts the PHP SDK's EncryptInfo back to the fields", () => {
    expect(decryptInfo(PHP_ENCRYPT_INFO, KEYS)).toEqual(FIELDS);
  });

  it('has the documented structure: hex of base64(ciphertext) ":::" base64(16-byte tag)', () => {
    const joined = Buffer.from(encryptInfo(FIELDS, KEYS), 'hex').toString('utf8');
    const [data, tag] = joined.split(':::');
    expect(Buffer.from(data!, 'base64').length).toBe(Buffer.byteLength(phpQueryString(FIELDS)));
    expect(Buffer.from(tag!, 'base64')).toHaveLength(16);
  });

  it('round-trips any fields, and the HashInfo is upper-case SHA-256 of key + EncryptInfo + IV', () => {
    const sealed = seal('abc', { MerTradeNo: 'A1', Note: '中文 + & = %' }, KEYS);
    expect(sealed).toMatchObject({ MerID: 'abc', Version: '1.0' });
    expect(sealed.HashInfo).toMatch(/^[0-9A-F]{64}$/);
    expect(open(sealed, KEYS)).toEqual({ MerTradeNo: 'A1', Note: '中文 + & = %' });
  });

  it('accepts the HashInfo in either case, compared in constant time, and nothing else', () => {
    expect(hasValidHashInfo(PHP_ENCRYPT_INFO, PHP_HASH_INFO.toLowerCase(), KEYS)).toBe(true);
    expect(hasValidHashInfo(PHP_ENCRYPT_INFO, 'A'.repeat(64), KEYS)).toBe(false);
    expect(hasValidHashInfo(PHP_ENCRYPT_INFO, 'short', KEYS)).toBe(false);
    expect(hasValidHashInfo(PHP_ENCRYPT_INFO, undefined, KEYS)).toBe(false);
  });

  it('refuses a tampered message: a changed HashInfo, a changed ciphertext with a matching HashInfo, other keys', () => {
    const sealed = seal('abc', FIELDS, KEYS);
    expect(() => open({ ...sealed, HashInfo: hashInfo('00', KEYS) }, KEYS)).toThrow('HashInfo does not match');
    // Flip one base64 character of the ciphertext and re-hash: only the GCM tag can catch it.
    const joined = Buffer.from(sealed.EncryptInfo, 'hex').toString('utf8');
    const flipped = (joined[0] === 'A' ? 'B' : 'A') + joined.slice(1);
    const forged = Buffer.from(flipped, 'utf8').toString('hex');
    expect(() => open({ EncryptInfo: forged, HashInfo: hashInfo(forged, KEYS) }, KEYS)).toThrow(PayuniCipherError);
    expect(() => decryptInfo(forged, KEYS)).toThrow('GCM tag check failed');
    const other = { hashKey: 'abcdefghijklmnopqrstuvwxyz123456', hashIV: KEYS.hashIV };
    expect(() => open(sealed, other)).toThrow('HashInfo does not match');
    expect(() => decryptInfo(sealed.EncryptInfo, other)).toThrow(PayuniCipherError);
  });

  it.each([
    ['not hex', 'zz'],
    ['no ::: separator', Buffer.from('abcd', 'utf8').toString('hex')],
    ['a short tag', Buffer.from('YWJj:::YWJj', 'utf8').toString('hex')],
    ['an empty string', ''],
  ])('refuses EncryptInfo that is %s', (_, encrypted) => {
    expect(() => decryptInfo(encrypted, KEYS)).toThrow(PayuniCipherError);
  });

  it('refuses keys of the wrong length rather than padding them as PHP would', () => {
    expect(() => encryptInfo(FIELDS, { ...KEYS, hashKey: 'short' })).toThrow('32 bytes');
    expect(() => encryptInfo(FIELDS, { ...KEYS, hashIV: 'short' })).toThrow('16 bytes');
  });
});

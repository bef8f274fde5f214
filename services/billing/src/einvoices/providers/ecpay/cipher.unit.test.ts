import { createDecipheriv } from 'node:crypto';
import {
  EcpayCipherError,
  decryptData,
  decryptText,
  encryptData,
  encryptText,
  phpUrlDecode,
  phpUrlEncode,
  sealRequest,
} from './cipher';
import { ECPAY_EINVOICE_STAGE_MERCHANT } from './merchant';

/** The public test merchant's e-invoice keys (測試介接資訊), which every vector below uses. */
const KEYS = { hashKey: 'ejCk326UnaZWKisg', hashIV: 'q9jcZX8Ib9LM8wYk' };

/**
 * The example of 附錄 / 參數加密方式說明 (?p=7958), as quoted by ithelp.ithome.com.tw/articles/10354271
 * (「文件提供了英文大寫與小寫的範例」) and by three clients' tests: the data, its url-encoding in
 * upper case, and the AES result. `lowerCaseData` is not quoted anywhere readable here: it is the
 * same JSON url-encoded with lower-case hex (what ECPay's .NET SDK, HttpUtility.UrlEncode,
 * writes), encrypted by this code; it shows an answer in that form reads the same.
 */
const DOC_EXAMPLE = {
  json: '{"Name":"Test","ID":"A123456789"}',
  encoded: '%7B%22Name%22%3A%22Test%22%2C%22ID%22%3A%22A123456789%22%7D',
  data: 'uvI4yrErM37XNQkXGAgRgJAgHn2t72jahaMZzYhWL1HmvH4WV18VJDP2i9pTbC+tby5nxVExLLFyAkbjbS2Dvg==',
  lowerCaseData: 'ZD/z07UvdmL3aYz0tsVo+bFXF5VldNcns6ezyfea777KOmLiizrUNDYe+v1bh2QTT4AySf1NICgXxWXB6f7c6A==',
};

/**
 * ECPay's 電子發票示範 (developers.ecpay.com.tw/?p=19021): a B2C Issue by the test merchant,
 * `RqHeader: {Timestamp: 1747891440}` and this Data. The page shows the plaintext only as a
 * picture; the archived copy of its text stops after these 1445 characters of Data (67 whole AES
 * blocks and part of the 68th), which decrypt under the test keys to the fields below, item 1
 * and the start of item 2. Item 2's other fields are not on the page: they are the obvious
 * completion (SalesAmount 70 = 50 + 20) and no byte compared depends on them.
 */
const DEMO_DATA_PREFIX =
  'XeEOdHpTRvxKEqs/JD9RSd16s7VtpyWVCN6AV44pKTV7XoPByaStato0iqOI39rIrp3of8JQh2ctO23quUAG9Q06NewBnZlHoZsPIrZsw0P4aU+eOEgKD03CkkJS2t5khD6hNav2oMvdFonTGoryFiyLIjxBCpGJ/1FWeLAjfaaGc9ia6M5iL5E+8nH5YIxuNKPmQX3m4CkPYqIVuztDW55TO3rAwe9qCo8ICUAO3ThSSiSSDo2y6nYhMX9EjGBu2XV7ZuD60SofsMCFfTrxXBYIOgpnin5uQNgchAP/O41HRt/teXd7IIts9f3p3YRVwqHBcm+qzPH9jkOQWreiEq9Tx1xsFoZF21J+1dNHzQzet4Qb/SICZ9pviBaA1zM48KcH2iecwwnbFdv9y4anorvfjTlF5A3Z2mt82mV1NDsOY8n+GnU2GB/nGg35vw2VgjrQdQmUkarH/NHcgHkc2HZ2tM5XphlqdtHQAdPhnyoxq4ecccvpKOOZtlNK4qpeZNl4/4ZpRZ2HoJ1T0kkLLHFoPUkVE/Yls7higVMVgUZiZIpj1Z04pN2FneD2CX+uNOGL1dz6IYONuQl3kjyv+URwmBSEoPF9yE39G65vxSPcM/6uzGtx2Fg+hOOgD+G0Ps0qmzPohTsJ66c6B4telinAoDihGzgI+Wd7d7vpVLAqJp6ort515D3VqPDnLxLnO3Z60cNxaJfWI/PN7mjFz9ovE/1z0SVj3dvIe0ig9r74I+mBXgo8/WymGQhBwag34FKOmCmIFpSmCu0fzXdCAya3/m5+CRsv2VFCkD2npugXchUUZXJFw48XXA3bqa5ra+iOWfMQADmwvMlab8a0XbDHp2ehVgcVUZ7q6Iil/PeVtcgXRbKBBa1OAVVxkEYbZe0lBoOIo7YguwWNVPS9bQhJEYgHyBnNrqxVg/jGSio9fcm+Xw0krubUjp3ISLlE+39MQsnfa2VtpKrLAj4ORJyXG2O4oKODnalQnV71kI1g67JGMy22elqoQa5eCP6FKHdHFpZVZfzsjySoLFjIruLCsvoCD2t4REGsXySG9C497K0xcPMyzZIZ2kDxpqM7V5TY/XYJaUbJSOYJzhui9grCgsWJwtOhcbIbi/oSy4n14e9mX0hTcA2hegJNY2NcjS3RyckS8rMexf674Pw07zx59MgBZSLTOCoXA9QtdOhqROEWMVxyn2FjFKYhQdG3Zork55jsjuMFWaaNKdRyiOqjX9LKOfr9wgVuc3BUrYhN6CL9fEkAztFDJ5SFGh3lXconP7aj2/+nhIXv039tGzJe+EMf578gmediXCaAr49KGDpWmLDMyZv6Hco8P0HFJ0V61UX511AkJVq4hMqXn8nO70udMqEPOMj1mmhl0OBxSS4jZX1lHKsZORPPqB/R08VAeI/qhHu9A+pNtNA80xTUs8we3oDsem4gM';
const DEMO_FIELDS = {
  MerchantID: '2000132',
  RelateNumber: 'ecpayinvtest000',
  CustomerID: '',
  CustomerIdentifier: '97025978',
  CustomerName: '綠界科技股份有限公司',
  CustomerAddr: '台北市南港區成功路一段58號3樓',
  CustomerPhone: '',
  CustomerEmail: 'test@ecpay.com.tw',
  ClearanceMark: '1',
  Print: '1',
  Donation: '0',
  LoveCode: '',
  CarrierType: '',
  CarrierNum: '',
  TaxType: '1',
  SalesAmount: 70,
  InvoiceRemark: 'test',
  InvType: '07',
  vat: '1',
  Items: [
    {
      ItemSeq: 1,
      ItemName: '商品1',
      ItemCount: 1,
      ItemWord: '個',
      ItemPrice: 50,
      ItemTaxType: '1',
      ItemAmount: 50,
      ItemRemark: 'item01_desc',
    },
    {
      ItemSeq: 2,
      ItemName: '商品2',
      ItemCount: 1,
      ItemWord: '個',
      ItemPrice: 20,
      ItemTaxType: '1',
      ItemAmount: 20,
      ItemRemark: 'item02_desc',
    },
  ],
};

/**
 * No published vector holds the characters PHP's urlencode and JavaScript's encoders disagree on
 * (space, `!*'()~`), so this one was computed outside this code. The url-encoding was written by
 * hand from PHP's rules (and agrees with Python's `quote_plus(..., safe='')` with `~` as `%7E`);
 * the AES step is openssl's:
 *
 *   printf '%s' "$ENCODED" | openssl enc -aes-128-cbc \
 *     -K 656a436b333236556e615a574b697367 -iv 71396a635a58384962394c4d3877596b | base64 -w0
 *
 * (-K and -iv are the hex of ejCk326UnaZWKisg and q9jcZX8Ib9LM8wYk; OpenSSL 3, PKCS7 by default.)
 */
const OPENSSL_VECTOR = {
  fields: { MerchantID: '2000132', ItemName: "方案 Pro (年繳)*!~'", Email: 'a-b_c.d@example.com' },
  encoded:
    '%7B%22MerchantID%22%3A%222000132%22%2C%22ItemName%22%3A%22%E6%96%B9%E6%A1%88+Pro+%28%E5%B9%B4%E7%B9%B3%29' +
    '%2A%21%7E%27%22%2C%22Email%22%3A%22a-b_c.d%40example.com%22%7D',
  data:
    'XeEOdHpTRvxKEqs/JD9RSd16s7VtpyWVCN6AV44pKTVKsXddZRgV+Cle9oeB2PqsAwrSpkBQ1TVXvzwErJMdfnewccYTA/iGTqwwtKmygIld' +
    'Hn9WtZtA8h5MzQMHIzEvFWfZn+nBO7/OMjyJQS5QrZaTqzqDDCzT+VQOXnkfI1IdvGm5iJoyFMMZlVNAzpYYryY1tiBspaUmF9sZIq11Z7oB' +
    'NOKKxA+Gn9bsYagavHw=',
};

describe('ECPay e-invoice Data (AES-128-CBC of urlencoded JSON)', () => {
  it("given the document's example, url-encodes and encrypts it to the document's Data exactly", () => {
    expect(phpUrlEncode(DOC_EXAMPLE.json)).toBe(DOC_EXAMPLE.encoded);
    expect(encryptText(DOC_EXAMPLE.encoded, KEYS)).toBe(DOC_EXAMPLE.data);
    expect(encryptData(JSON.parse(DOC_EXAMPLE.json), KEYS)).toBe(DOC_EXAMPLE.data);
  });

  it("decrypts the document's Data, and its lower-case variant, back to the example's fields", () => {
    expect(decryptText(DOC_EXAMPLE.data, KEYS).toString('utf8')).toBe(DOC_EXAMPLE.encoded);
    expect(decryptData(DOC_EXAMPLE.data, KEYS)).toEqual({ Name: 'Test', ID: 'A123456789' });
    expect(decryptText(DOC_EXAMPLE.lowerCaseData, KEYS).toString('utf8')).toBe(
      DOC_EXAMPLE.encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    );
    expect(decryptData(DOC_EXAMPLE.lowerCaseData, KEYS)).toEqual({ Name: 'Test', ID: 'A123456789' });
  });

  it("given the fields of ECPay's 電子發票示範 Issue, gives the page's Data, every published character of it", () => {
    const ours = encryptData(DEMO_FIELDS, KEYS);
    expect(ours.slice(0, DEMO_DATA_PREFIX.length)).toBe(DEMO_DATA_PREFIX);
    // And the other way: the published blocks decrypt to our url-encoding of those fields.
    const whole = Buffer.from(DEMO_DATA_PREFIX, 'base64').subarray(0, 67 * 16);
    const decipher = createDecipheriv('aes-128-cbc', KEYS.hashKey, KEYS.hashIV).setAutoPadding(false);
    const plain = Buffer.concat([decipher.update(whole), decipher.final()]).toString('latin1');
    expect(plain).toBe(phpUrlEncode(JSON.stringify(DEMO_FIELDS)).slice(0, 67 * 16));
    expect(plain).toContain('%22CustomerName%22%3A%22%E7%B6%A0%E7%95%8C');
  });

  it('matches the vector computed with openssl for the characters the encoders disagree on', () => {
    expect(phpUrlEncode(JSON.stringify(OPENSSL_VECTOR.fields))).toBe(OPENSSL_VECTOR.encoded);
    expect(encryptData(OPENSSL_VECTOR.fields, KEYS)).toBe(OPENSSL_VECTOR.data);
    expect(decryptData(OPENSSL_VECTOR.data, KEYS)).toEqual(OPENSSL_VECTOR.fields);
  });

  it("url-encodes as PHP's urlencode: a space is +, only letters, digits and -_. stay, hex in upper case", () => {
    expect(phpUrlEncode("a b!*'()~-_.z/@:")).toBe('a+b%21%2A%27%28%29%7E-_.z%2F%40%3A');
    expect(phpUrlEncode('綠')).toBe('%E7%B6%A0');
  });

  it("url-decodes as PHP's urldecode: + is a space, %xx in either case, other characters as they are", () => {
    expect(phpUrlDecode('a+b%21%2a(c)%E7%B6%a0%zz%')).toBe('a b!*(c)綠%zz%');
    expect(() => phpUrlDecode('%E7%B6')).toThrow(EcpayCipherError);
  });

  it("reads an answer whatever JSON escaping ECPay's encoder used (PHP's \\/ and \\u escapes, .NET's plain UTF-8)", () => {
    const php = encryptText(
      phpUrlEncode('{"RtnCode":1,"RtnMsg":"\\u958b\\u7acb\\u767c\\u7968\\u6210\\u529f","A":"a\\/b"}'),
      KEYS,
    );
    expect(decryptData(php, KEYS)).toEqual({ RtnCode: 1, RtnMsg: '開立發票成功', A: 'a/b' });
    const dotNet = encryptText('%7b%22RtnMsg%22%3a%22%e9%96%8b%e7%ab%8b+OK%22%7d', KEYS);
    expect(decryptData(dotNet, KEYS)).toEqual({ RtnMsg: '開立 OK' });
  });

  it('seals a request as the v3 envelope: MerchantID, RqHeader.Timestamp in unix seconds, Data', () => {
    const sealed = sealRequest(
      ECPAY_EINVOICE_STAGE_MERCHANT,
      { MerchantID: '2000132' },
      new Date('2025-05-22T05:24:00.900Z'),
    );
    expect(sealed).toEqual({
      MerchantID: '2000132',
      RqHeader: { Timestamp: 1747891440 },
      Data: encryptData({ MerchantID: '2000132' }, KEYS),
    });
  });

  it.each([
    ['not base64', 'not base64!'],
    ['base64 of no whole block', Buffer.from('short').toString('base64')],
    ['empty', ''],
    [
      'a padding that does not check (other keys)',
      encryptData({ a: 1 }, { hashKey: 'abcdefghijklmnop', hashIV: 'ponmlkjihgfedcba' }),
    ],
    ['not JSON', encryptText('%7Bnot+json', KEYS)],
    ['a JSON array', encryptText(phpUrlEncode('[1,2]'), KEYS)],
  ])('refuses Data that is %s', (_, data) => {
    expect(() => decryptData(data, KEYS)).toThrow(EcpayCipherError);
  });

  it('refuses keys of the wrong length rather than padding them as PHP would', () => {
    expect(() => encryptData({}, { ...KEYS, hashKey: 'short' })).toThrow('16 bytes');
    expect(() => encryptData({}, { ...KEYS, hashIV: `${KEYS.hashIV}x` })).toThrow('16 bytes');
  });
});

import { AMEGO_TEST_MERCHANT } from './merchant';
import { amegoForm, amegoSign, hasValidAmegoSign } from './sign';

/**
 * The f0401 example of Amego's API examples page (invoice.amego.tw/api_doc/example): the invoice
 * data its Node.js, Java and Python examples sign, the time they comment out (1628136135) and the
 * public test App Key. The page's Java example says "此範例 md5 結果為
 * efe84e2b95153a09df64a36e04e8ae1c" for the compact JSON (the string JSON.stringify gives), its
 * Python example "f53a336934b2af0589b845638d1495cc" for `json.dumps(invoice_data, indent=0)`.
 * Both were also recomputed outside this code:
 *   D='{"OrderId":"A20200817105934",...,"TotalAmount":"168"}'   # EXAMPLE_JSON below
 *   printf '%s' "${D}1628136135sHeq7t8G1wiQvhAuIM27" | md5sum   # efe84e2b95153a09df64a36e04e8ae1c
 *   python3 -c 'import json,hashlib; ...md5((json.dumps(d,indent=0)+"1628136135"+key).encode())'  # f53a3369...
 */
const EXAMPLE = {
  OrderId: 'A20200817105934',
  BuyerIdentifier: '28080623',
  BuyerName: '光貿科技有限公司',
  NPOBAN: '',
  ProductItem: [
    { Description: '測試商品1', Quantity: '1', UnitPrice: '170', Amount: '170', Remark: '', TaxType: '1' },
    { Description: '會員折抵', Quantity: '1', UnitPrice: '-2', Amount: '-2', Remark: '', TaxType: '1' },
  ],
  SalesAmount: '160',
  FreeTaxSalesAmount: '0',
  ZeroTaxSalesAmount: '0',
  TaxType: '1',
  TaxRate: '0.05',
  TaxAmount: '8',
  TotalAmount: '168',
};
const EXAMPLE_JSON =
  '{"OrderId":"A20200817105934","BuyerIdentifier":"28080623","BuyerName":"光貿科技有限公司","NPOBAN":"",' +
  '"ProductItem":[{"Description":"測試商品1","Quantity":"1","UnitPrice":"170","Amount":"170","Remark":"","TaxType":"1"},' +
  '{"Description":"會員折抵","Quantity":"1","UnitPrice":"-2","Amount":"-2","Remark":"","TaxType":"1"}],' +
  '"SalesAmount":"160","FreeTaxSalesAmount":"0","ZeroTaxSalesAmount":"0","TaxType":"1","TaxRate":"0.05",' +
  '"TaxAmount":"8","TotalAmount":"168"}';
const EXAMPLE_TIME = 1628136135;
const KEY = AMEGO_TEST_MERCHANT.appKey;

/** What Python's json.dumps(invoice_data, indent=0) writes: a line per value, `\u` escapes for non-ASCII. */
const PYTHON_JSON = [
  '{',
  '"OrderId": "A20200817105934",',
  '"BuyerIdentifier": "28080623",',
  String.raw`"BuyerName": "\u5149\u8cbf\u79d1\u6280\u6709\u9650\u516c\u53f8",`,
  '"NPOBAN": "",',
  '"ProductItem": [',
  '{',
  String.raw`"Description": "\u6e2c\u8a66\u5546\u54c11",`,
  '"Quantity": "1",',
  '"UnitPrice": "170",',
  '"Amount": "170",',
  '"Remark": "",',
  '"TaxType": "1"',
  '},',
  '{',
  String.raw`"Description": "\u6703\u54e1\u6298\u62b5",`,
  '"Quantity": "1",',
  '"UnitPrice": "-2",',
  '"Amount": "-2",',
  '"Remark": "",',
  '"TaxType": "1"',
  '}',
  '],',
  '"SalesAmount": "160",',
  '"FreeTaxSalesAmount": "0",',
  '"ZeroTaxSalesAmount": "0",',
  '"TaxType": "1",',
  '"TaxRate": "0.05",',
  '"TaxAmount": "8",',
  '"TotalAmount": "168"',
  '}',
].join('\n');

describe('Amego sign', () => {
  it("given the documented example's data, time and test App Key, gives the Java example's md5 exactly", () => {
    expect(amegoSign(EXAMPLE_JSON, EXAMPLE_TIME, KEY)).toBe('efe84e2b95153a09df64a36e04e8ae1c');
    expect(amegoSign(EXAMPLE_JSON, String(EXAMPLE_TIME), KEY)).toBe('efe84e2b95153a09df64a36e04e8ae1c');
  });

  it("given the Python example's json.dumps(indent=0) string, gives its md5 exactly: the string is signed as sent", () => {
    expect(JSON.parse(PYTHON_JSON)).toEqual(EXAMPLE);
    expect(amegoSign(PYTHON_JSON, EXAMPLE_TIME, KEY)).toBe('f53a336934b2af0589b845638d1495cc');
  });

  it('serialises the data once, as JSON.stringify does (the Node.js example), and signs that string', () => {
    const form = amegoForm(AMEGO_TEST_MERCHANT, EXAMPLE, new Date(EXAMPLE_TIME * 1000 + 999));
    expect(form).toEqual({
      invoice: '12345678',
      data: EXAMPLE_JSON,
      time: '1628136135',
      sign: 'efe84e2b95153a09df64a36e04e8ae1c',
    });
    // As a form body the JSON is URL-encoded, and reads back as the same string.
    expect(new URLSearchParams(new URLSearchParams(form).toString()).get('data')).toBe(EXAMPLE_JSON);
  });

  it('when the form carries the right sign, accepts it; when data, time, the key or the sign changed, refuses it', () => {
    const form = amegoForm(AMEGO_TEST_MERCHANT, EXAMPLE, new Date(EXAMPLE_TIME * 1000));
    expect(hasValidAmegoSign(form, KEY)).toBe(true);
    expect(hasValidAmegoSign({ ...form, sign: form.sign.toUpperCase() }, KEY)).toBe(true);
    expect(hasValidAmegoSign({ ...form, data: form.data.replace('168"}', '169"}') }, KEY)).toBe(false);
    expect(hasValidAmegoSign({ ...form, time: '1628136136' }, KEY)).toBe(false);
    expect(hasValidAmegoSign(form, 'another-key')).toBe(false);
    expect(hasValidAmegoSign({ ...form, sign: 'a'.repeat(32) }, KEY)).toBe(false);
    expect(hasValidAmegoSign({ ...form, sign: 'short' }, KEY)).toBe(false);
    expect(hasValidAmegoSign({ invoice: '12345678', data: form.data, time: form.time }, KEY)).toBe(false);
  });
});

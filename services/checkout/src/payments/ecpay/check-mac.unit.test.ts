import { checkMacValue, ecpayUrlEncode, hasValidCheckMac } from './check-mac';

/** ECPay's public staging merchant (全方位金流 測試環境), as its documents print it. */
const STAGING_KEYS = { hashKey: 'pwFHCqoQZGmho4w6', hashIV: 'EkRm7iFT261dpevs' };

/** The AioCheckOut example of "附錄 / 檢查碼機制" (developers.ecpay.com.tw/?p=2902). */
const AIO_EXAMPLE = {
  TradeDesc: '促銷方案',
  PaymentType: 'aio',
  MerchantTradeDate: '2023/03/12 15:30:23',
  MerchantTradeNo: 'ecpay20230312153023',
  MerchantID: '3002607',
  ReturnURL: 'https://www.ecpay.com.tw/receive.php',
  ItemName: 'Apple iphone 15',
  TotalAmount: '30000',
  ChoosePayment: 'ALL',
  EncryptType: '1',
};

describe('ECPay CheckMacValue', () => {
  it("given the documented AioCheckOut example, encodes it to the document's step (4) string exactly", () => {
    const sorted =
      'HashKey=pwFHCqoQZGmho4w6&ChoosePayment=ALL&EncryptType=1&ItemName=Apple iphone 15&MerchantID=3002607' +
      '&MerchantTradeDate=2023/03/12 15:30:23&MerchantTradeNo=ecpay20230312153023&PaymentType=aio' +
      '&ReturnURL=https://www.ecpay.com.tw/receive.php&TotalAmount=30000&TradeDesc=促銷方案&HashIV=EkRm7iFT261dpevs';
    expect(ecpayUrlEncode(sorted).toLowerCase()).toBe(
      'hashkey%3dpwfhcqoqzgmho4w6%26choosepayment%3dall%26encrypttype%3d1%26itemname%3dapple+iphone+15' +
        '%26merchantid%3d3002607%26merchanttradedate%3d2023%2f03%2f12+15%3a30%3a23' +
        '%26merchanttradeno%3decpay20230312153023%26paymenttype%3daio' +
        '%26returnurl%3dhttps%3a%2f%2fwww.ecpay.com.tw%2freceive.php%26totalamount%3d30000' +
        '%26tradedesc%3d%e4%bf%83%e9%8a%b7%e6%96%b9%e6%a1%88%26hashiv%3dekrm7ift261dpevs',
    );
  });

  it('given the documented AioCheckOut example, gives its SHA-256 CheckMacValue', () => {
    expect(checkMacValue(AIO_EXAMPLE, STAGING_KEYS)).toBe(
      '6C51C9E6888DE861FD62FB1DD17029FC742634498FD813DC43D4243B5685B840',
    );
  });

  it("given the documented MD5 example (developers.ecpay.com.tw/?p=38242), gives the document's value", () => {
    const params = {
      RtnCode: '1',
      RtnMsg: '',
      IA_Allow_No: '1909181313013546',
      IA_Invoice_No: 'UV11100019',
      IA_Date: '2019-09-18 13:13:23',
      IIS_Remain_Allowance_Amt: '0',
    };
    expect(checkMacValue(params, { hashKey: 'ejCk326UnaZWKisg', hashIV: 'q9jcZX8Ib9LM8wYk' }, 'md5')).toBe(
      '50A276E71DAE26343013958B405EEEA0',
    );
  });

  it('encodes the characters .NET and encodeURIComponent disagree on the way ECPay does', () => {
    expect(ecpayUrlEncode("a b~c'd-e_f.g!h*i(j)k")).toBe('a+b%7Ec%27d-e_f.g!h*i(j)k');
  });

  it('when a notification carries the right value, accepts it; when any field or the value changed, refuses it', () => {
    const signed = { ...AIO_EXAMPLE, CheckMacValue: checkMacValue(AIO_EXAMPLE, STAGING_KEYS) };
    expect(hasValidCheckMac(signed, STAGING_KEYS)).toBe(true);
    expect(hasValidCheckMac({ ...signed, CheckMacValue: signed.CheckMacValue.toLowerCase() }, STAGING_KEYS)).toBe(true);
    expect(hasValidCheckMac({ ...signed, TotalAmount: '1' }, STAGING_KEYS)).toBe(false);
    expect(hasValidCheckMac({ ...signed, CheckMacValue: 'A'.repeat(64) }, STAGING_KEYS)).toBe(false);
    expect(hasValidCheckMac({ ...signed, CheckMacValue: 'short' }, STAGING_KEYS)).toBe(false);
    expect(hasValidCheckMac(AIO_EXAMPLE, STAGING_KEYS)).toBe(false);
    expect(hasValidCheckMac(signed, { ...STAGING_KEYS, hashIV: 'x' })).toBe(false);
  });
});

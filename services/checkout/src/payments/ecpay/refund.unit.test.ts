import { checkMacValue, hasValidCheckMac } from './check-mac';
import { ECPAY_STAGING_MERCHANT } from './merchant';
import { EcpayRefundUnanswered, refundEcpayTrade } from './refund';

const merchant = { ...ECPAY_STAGING_MERCHANT, baseUrl: 'https://ecpay.test' };
const trade = { merchantTradeNo: 'ABC123', ecpayTradeNo: '2611271200001234', amount: 100 };
const signed = (fields: Record<string, string>) =>
  new URLSearchParams({ ...fields, CheckMacValue: checkMacValue(fields, merchant) }).toString();
const answer = { MerchantID: '3002607', MerchantTradeNo: 'ABC123', TradeNo: '2611271200001234' };

function answering(status: number, body: string, seen: { url?: string; fields?: Record<string, string> } = {}) {
  return async (url: string | URL | Request, init?: RequestInit) => {
    seen.url = String(url);
    seen.fields = Object.fromEntries(new URLSearchParams(String(init?.body)));
    return new Response(body, { status });
  };
}

describe('ECPay card refunds (CreditDetail/DoAction)', () => {
  it('given a refund, posts Action R with the amount, both trade numbers and a CheckMacValue ECPay can check', async () => {
    const seen: { url?: string; fields?: Record<string, string> } = {};
    const done = await refundEcpayTrade(merchant, trade, {
      fetch: answering(200, signed({ ...answer, RtnCode: '1', RtnMsg: 'OK' }), seen),
    });
    expect(done).toEqual({ status: 'refunded' });
    expect(seen.url).toBe('https://ecpay.test/CreditDetail/DoAction');
    expect(seen.fields).toMatchObject({
      MerchantID: '3002607',
      MerchantTradeNo: 'ABC123',
      TradeNo: '2611271200001234',
      Action: 'R',
      TotalAmount: '100',
    });
    expect(hasValidCheckMac(seen.fields!, merchant)).toBe(true);
  });

  it('when ECPay refuses, answers its code and message; a refund of nothing is not sent', async () => {
    const refused = await refundEcpayTrade(merchant, trade, {
      fetch: answering(200, signed({ ...answer, RtnCode: '10100052', RtnMsg: 'TotalAmount Error' })),
    });
    expect(refused).toEqual({ status: 'refused', code: '10100052', message: 'TotalAmount Error' });
    await expect(refundEcpayTrade(merchant, { ...trade, amount: 0 })).rejects.toThrow(RangeError);
  });

  it('when the answer is not signed, is about another trade, is an HTTP error or never comes, it is no answer', async () => {
    const forged = new URLSearchParams({ ...answer, RtnCode: '1', CheckMacValue: 'A'.repeat(64) }).toString();
    const other = signed({ ...answer, MerchantTradeNo: 'OTHER', RtnCode: '1' });
    for (const fetch of [
      answering(200, forged),
      answering(200, other),
      answering(500, ''),
      async () => {
        throw new TypeError('socket hang up');
      },
    ]) {
      await expect(refundEcpayTrade(merchant, trade, { fetch })).rejects.toThrow(EcpayRefundUnanswered);
    }
  });

  /** ECPay answering each Action as `codes` says (RtnCode), recording the Actions asked in order. */
  function byAction(codes: Record<string, string>, asked: string[]) {
    return async (_url: string | URL | Request, init?: RequestInit) => {
      const action = new URLSearchParams(String(init?.body)).get('Action')!;
      asked.push(action);
      return new Response(signed({ ...answer, RtnCode: codes[action] ?? '10100051', RtnMsg: `${action} answered` }));
    };
  }
  const whole = { ...trade, authorised: 100 };

  it('given a whole refund that R cannot make on the day of payment, abandons the authorisation (N)', async () => {
    const asked: string[] = [];
    const done = await refundEcpayTrade(merchant, whole, { fetch: byAction({ R: '10100253', N: '1' }, asked) });
    expect(done).toEqual({ status: 'refunded' });
    expect(asked).toEqual(['R', 'N']);
  });

  it('given a whole refund while the capture is under way, cancels the capture (E), then abandons (N)', async () => {
    const asked: string[] = [];
    let abandoned = 0;
    const fetch = async (url: string | URL | Request, init?: RequestInit) => {
      const action = new URLSearchParams(String(init?.body)).get('Action');
      // N is refused until E has put the trade back to authorised.
      const code = action === 'N' ? (asked.includes('E') ? '1' : '10100255') : action === 'E' ? '1' : '10100254';
      if (action === 'N' && code === '1') abandoned++;
      asked.push(action!);
      return new Response(signed({ ...answer, RtnCode: code, RtnMsg: 'x' }));
    };
    expect(await refundEcpayTrade(merchant, whole, { fetch })).toEqual({ status: 'refunded' });
    expect([asked, abandoned]).toEqual([['R', 'N', 'E', 'N'], 1]);
  });

  it("when none of R, N and E applies, answers R's refusal; a partial refund is never abandoned", async () => {
    const asked: string[] = [];
    const refused = await refundEcpayTrade(merchant, whole, {
      fetch: byAction({ R: '10100052', N: '10100255', E: '10100256' }, asked),
    });
    expect(refused).toEqual({ status: 'refused', code: '10100052', message: 'R answered' });
    expect(asked).toEqual(['R', 'N', 'E']);
    const partial: string[] = [];
    const part = await refundEcpayTrade(
      merchant,
      { ...whole, amount: 40 },
      {
        fetch: byAction({ R: '10100253', N: '1', E: '1' }, partial),
      },
    );
    expect([part.status, partial]).toEqual(['refused', ['R']]);
  });

  it('when E is done and N then refused, says the capture was canceled and nothing abandoned', async () => {
    const asked: string[] = [];
    const refused = await refundEcpayTrade(merchant, whole, {
      fetch: byAction({ R: '10100254', N: '10100255', E: '1' }, asked),
    });
    expect(asked).toEqual(['R', 'N', 'E', 'N']);
    expect(refused).toMatchObject({ status: 'refused', message: expect.stringContaining('canceled the capture') });
  });
});

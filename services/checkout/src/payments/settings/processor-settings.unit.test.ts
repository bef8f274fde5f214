import { ApiError } from '@billing/contracts';
import {
  type ProcessorSettingsCommand,
  type ProcessorSettingsEvent,
  type ProcessorSettingsState,
  decide,
  defaultProcessorSettings,
  evolve,
  initialState,
  processorSettingsOf,
} from './processor-settings';

const now = new Date('2026-11-26T12:00:00Z');
const ecpay = {
  processor: 'ecpay' as const,
  merchant_id: '3002607',
  hash_key: 'pwFHCqoQZGmho4w6',
  hash_iv: 'EkRm7iFT261dpevs',
};
const configure = (environment: 'SANDBOX' | 'PRODUCTION', body: object, sealed: string | null = 'v1.sealed') =>
  ({
    type: 'ConfigureProcessor',
    data: { organization: 'org_1', environment, body, sealed, now },
  }) as ProcessorSettingsCommand;
const given = (...events: ProcessorSettingsEvent[]): ProcessorSettingsState => events.reduce(evolve, initialState());

describe('payment processor settings', () => {
  it('given nothing, Sandbox has the simulator and Production has no processor', () => {
    expect(processorSettingsOf(given(), 'org_1', 'SANDBOX')).toMatchObject({ processor: 'sandbox', methods: ['card'] });
    expect(processorSettingsOf(given(), 'org_1', 'PRODUCTION')).toMatchObject({ processor: 'none', methods: [] });
  });

  it('when ECPay is set in Production, records its public settings and the credentials only sealed', () => {
    const [event] = decide(configure('PRODUCTION', ecpay), given());
    expect(event).toEqual({
      type: 'PaymentProcessorConfigured',
      data: {
        organization: 'org_1',
        environment: 'PRODUCTION',
        object: {
          ...defaultProcessorSettings('org_1', 'PRODUCTION'),
          processor: 'ecpay',
          merchant_id: '3002607',
          endpoint_url: 'https://payment.ecpay.com.tw',
          methods: ['card', 'atm', 'cvs'],
          credentials_set: true,
          updated_at: now.toISOString(),
        },
        sealed_credentials: 'v1.sealed',
      },
    });
    expect(JSON.stringify(event)).not.toContain(ecpay.hash_key);
  });

  it('when ECPay is set in Sandbox, uses its staging site, or the address given (an emulator), and the methods chosen', () => {
    const [staging] = decide(configure('SANDBOX', ecpay), given());
    expect(staging).toMatchObject({ data: { object: { endpoint_url: 'https://payment-stage.ecpay.com.tw' } } });
    const [emulator] = decide(
      configure('SANDBOX', { ...ecpay, endpoint_url: 'http://127.0.0.1:9999', methods: ['atm'] }),
      given(),
    );
    expect(emulator).toMatchObject({ data: { object: { endpoint_url: 'http://127.0.0.1:9999', methods: ['atm'] } } });
  });

  it('when PAYUNi is set, uses its production site in Production, its sandbox or the address given in Sandbox, and all three methods', () => {
    const payuni = {
      processor: 'payuni' as const,
      merchant_id: 'S01421169',
      hash_key: '12345678901234567890123456789012',
      hash_iv: '1234567890123456',
    };
    const [production] = decide(configure('PRODUCTION', payuni), given());
    expect(production).toMatchObject({
      data: {
        object: {
          processor: 'payuni',
          merchant_id: 'S01421169',
          endpoint_url: 'https://api.payuni.com.tw',
          methods: ['card', 'atm', 'cvs'],
          credentials_set: true,
        },
      },
    });
    expect(JSON.stringify(production)).not.toContain(payuni.hash_key);
    const [sandbox] = decide(configure('SANDBOX', payuni), given());
    expect(sandbox).toMatchObject({ data: { object: { endpoint_url: 'https://sandbox-api.payuni.com.tw' } } });
    const [emulator] = decide(configure('SANDBOX', { ...payuni, endpoint_url: 'http://127.0.0.1:9998' }), given());
    expect(emulator).toMatchObject({ data: { object: { endpoint_url: 'http://127.0.0.1:9998' } } });
  });

  it.each([
    ['the simulator in Production', configure('PRODUCTION', { processor: 'sandbox' }), 'processor'],
    [
      'another address in Production',
      configure('PRODUCTION', { ...ecpay, endpoint_url: 'http://x.test' }),
      'endpoint_url',
    ],
  ])('refuses %s with 422 and records nothing', (_, command, path) => {
    let error: unknown;
    try {
      decide(command, given());
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(422);
    expect((error as ApiError).details?.[0]).toMatchObject({ path });
  });

  it('when removed, goes back to the defaults; removing nothing records nothing', () => {
    const state = given(...decide(configure('PRODUCTION', ecpay), given()));
    const remove: ProcessorSettingsCommand = {
      type: 'RemoveProcessor',
      data: { organization: 'org_1', environment: 'PRODUCTION', now },
    };
    const removed = decide(remove, state);
    expect(removed).toEqual([
      {
        type: 'PaymentProcessorRemoved',
        data: { organization: 'org_1', environment: 'PRODUCTION', removed_at: now.toISOString() },
      },
    ]);
    expect(
      processorSettingsOf(given(...decide(configure('PRODUCTION', ecpay), given()), ...removed), 'org_1', 'PRODUCTION'),
    ).toMatchObject({
      processor: 'none',
    });
    expect(decide(remove, given())).toEqual([]);
  });
});

import { type DashboardAgent, createUser, signedIn } from '../src/dashboard-helpers';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(90000);

/**
 * Issue 34 in the dashboard: the settings page shows and sets the credits settings (owners set,
 * members read), and the product form sets a plan's allowance with its rollover and its metered
 * prices; each checked through the admin or public API afterwards.
 */
describe('credits in the dashboard', () => {
  let platform: Platform;
  let receiver: Receiver;
  let shop: Awaited<ReturnType<typeof lifecycleOrganization>>;
  let owner: DashboardAgent;
  let member: DashboardAgent;
  let base: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startLifecyclePlatform();
    shop = await lifecycleOrganization(platform, receiver);
    await createUser(platform.gatewayUrl, shop.org.id, 'owner@credits.example', 'owner', 'correct horse battery');
    await createUser(platform.gatewayUrl, shop.org.id, 'member@credits.example', 'member', 'correct horse battery');
    owner = await signedIn(platform.gatewayUrl, 'owner@credits.example', 'correct horse battery');
    member = await signedIn(platform.gatewayUrl, 'member@credits.example', 'correct horse battery');
    base = `/dashboard/${shop.org.id}/sandbox`;
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  const settingsOf = async (environment = 'sandbox') =>
    (await shop.client.admin('GET', `/organizations/${shop.org.id}/billing_settings?environment=${environment}`)).body;

  it('sets the low-balance threshold and the overdraft limit per environment, refusing bad input at its field', async () => {
    const path = `${base}/settings`;
    const page = (await owner.get(path)).html;
    expect(page).toContain('Credits (Sandbox)');
    expect(page).toMatch(/<input\s+id="c-threshold"\s+name="low_balance_threshold"/);
    expect(page).toMatch(/id="c-overdraft"\s+name="overdraft_limit"\s+type="text"\s+value="0"/);

    const saved = await owner.submit(path, { _action: 'credits', low_balance_threshold: '50', overdraft_limit: '200' });
    expect(saved.status).toBe(303);
    expect((await owner.get(saved.location!)).html).toContain('Credits settings saved.');
    expect(await settingsOf()).toMatchObject({ credits_low_balance_threshold: 50, credits_overdraft_limit: 200 });
    expect(await settingsOf('production')).toMatchObject({
      credits_low_balance_threshold: null,
      credits_overdraft_limit: 0,
    });
    expect((await owner.get(path)).html).toMatch(/name="overdraft_limit"\s+type="text"\s+value="200"/);

    const bad = await owner.submit(path, { _action: 'credits', low_balance_threshold: '0', overdraft_limit: 'lots' });
    expect(bad.status).toBe(422);
    expect(bad.html).toMatch(/<p class="error" role="alert" id="error-credits">/);
    expect(bad.html).toMatch(/id="c-overdraft"[^>]*aria-invalid="true"/);
    expect(bad.html).toMatch(/name="overdraft_limit"\s+type="text"\s+value="lots"/);
    expect(await settingsOf()).toMatchObject({ credits_low_balance_threshold: 50, credits_overdraft_limit: 200 });

    // Empty threshold: off; the dunning settings are left as they were.
    const dunning = (await settingsOf()).dunning;
    await owner.submit(path, { _action: 'credits', low_balance_threshold: '', overdraft_limit: '0' });
    expect(await settingsOf()).toMatchObject({
      credits_low_balance_threshold: null,
      credits_overdraft_limit: 0,
      dunning,
    });
  });

  it('shows a member the credits settings without a form, and refuses their save', async () => {
    const path = `${base}/settings`;
    await owner.submit(path, { _action: 'credits', low_balance_threshold: '1500', overdraft_limit: '30' });
    const page = (await member.get(path)).html;
    expect(page).toContain('Only an owner can change the credits settings.');
    expect(page).toMatch(/<dt>Low-balance threshold<\/dt>\s*<dd>1,500 credits<\/dd>/);
    expect(page).toMatch(/<dt>Overdraft limit<\/dt>\s*<dd>30 credits<\/dd>/);
    expect(page).not.toContain('name="overdraft_limit"');
    const refused = await member.submit(path, { _action: 'credits', low_balance_threshold: '1', overdraft_limit: '1' });
    expect(refused.status).toBe(403);
    expect(await settingsOf()).toMatchObject({ credits_low_balance_threshold: 1500, credits_overdraft_limit: 30 });
    await owner.submit(path, { _action: 'credits', low_balance_threshold: '', overdraft_limit: '0' });
    expect((await member.get(path)).html).toMatch(
      /<dd>Off<\/dd>\s*<dt>Overdraft limit<\/dt>\s*<dd>None: never below zero<\/dd>/,
    );
  });

  it("sets a plan's credit allowance with its rollover from the product form, and turns the rollover off", async () => {
    const created = await owner.submit(`${base}/products`, {
      _action: 'create',
      name: 'Metered Pro',
      type: 'SUBSCRIPTION',
      interval: 'month',
      interval_count: '1',
      price: '499',
      credit_amount: '1000',
      credit_rollover: 'on',
    });
    expect(created.status).toBe(303);
    const id = created.location!.split('/').pop()!;
    const productOf = async () => (await shop.send('GET', `/products/${id}`)).body;
    expect((await productOf()).credits).toEqual({ amount: 1000, expires_after_days: null, rollover: true });
    const page = (await owner.get(`${base}/products/${id}`)).html;
    expect(page).toContain('1,000 credits each paid period; unused credits carry over');
    expect(page).toMatch(/id="p-credits-rollover" name="credit_rollover"\s+checked/);

    // Saved with the box left unticked: each period's allowance expires at its end again.
    await owner.submit(`${base}/products/${id}`, {
      _action: 'update',
      name: 'Metered Pro',
      price: '499',
      credit_amount: '1000',
    });
    expect((await productOf()).credits).toEqual({ amount: 1000, expires_after_days: null, rollover: false });
    expect((await owner.get(`${base}/products/${id}`)).html).toContain(
      '1,000 credits each paid period; unused credits expire at its end',
    );
    await owner.submit(`${base}/products/${id}`, {
      _action: 'update',
      name: 'Metered Pro',
      price: '499',
      credit_amount: '1000',
      credit_expires_after_days: '60',
      credit_rollover: 'on',
    });
    expect((await productOf()).credits).toEqual({ amount: 1000, expires_after_days: 60, rollover: true });

    // A credits product has no rollover to set: the box is not sent for it, nor shown on its page.
    const pack = await owner.submit(`${base}/products`, {
      _action: 'create',
      name: 'Pack',
      type: 'CREDITS',
      price: '300',
      credit_amount: '500',
      credit_rollover: 'on',
    });
    expect(pack.status).toBe(303);
    const packId = pack.location!.split('/').pop()!;
    expect((await shop.send('GET', `/products/${packId}`)).body.credits).toEqual({
      amount: 500,
      expires_after_days: null,
    });
    expect((await owner.get(`${base}/products/${packId}`)).html).not.toContain('credit_rollover');
  });

  it("shows a plan's metered prices, and saving its form keeps them", async () => {
    const prices = [
      { meter: 'api_calls', unit_amount: 1, package_size: 100 },
      { meter: 'seats', unit_amount: 50, package_size: 1 },
    ];
    const created = await shop.client.createProduct(
      shop.org.id,
      plan({ slug: 'metered', price: 299, metered_prices: prices }),
    );
    const id = created.body.id;
    const page = (await owner.get(`${base}/products/${id}`)).html;
    expect(page).toContain('Usage billed on each renewal invoice');
    expect(page).toContain('api_calls: NT$1 per 100 units, rounded up<br />seats: NT$50 per unit');
    expect((await owner.get(`/dashboard/language/zh-TW?back=${encodeURIComponent(base)}`)).status).toBe(303);
    expect((await owner.get(`${base}/products/${id}`)).html).toContain('api_calls：每 100 單位 NT$1，不足一組以一組計');
    await owner.get(`/dashboard/language/en?back=${encodeURIComponent(base)}`);
    await owner.submit(`${base}/products/${id}`, { _action: 'update', name: 'Metered', price: '349' });
    expect((await shop.send('GET', `/products/${id}`)).body).toMatchObject({ price: 349, metered_prices: prices });
  });

  it("sets a plan's metered prices from the product form, refusing a bad meter key at its field", async () => {
    /** The form's five rows, empty but for those given. */
    const rows = (...given: Array<[number, string, string, string]>) => {
      const fields: Record<string, string> = {};
      for (let row = 0; row < 5; row++) {
        fields[`metered_meter_${row}`] = '';
        fields[`metered_unit_amount_${row}`] = '';
        fields[`metered_package_size_${row}`] = '';
      }
      for (const [row, meter, unitAmount, packageSize] of given) {
        fields[`metered_meter_${row}`] = meter;
        fields[`metered_unit_amount_${row}`] = unitAmount;
        fields[`metered_package_size_${row}`] = packageSize;
      }
      return fields;
    };
    const newForm = (await owner.get(`${base}/products`)).html;
    expect(newForm).toContain('<legend>Plans: metered prices (optional)</legend>');
    expect(newForm).toMatch(
      /<label for="p-meter-4">Meter key<\/label\s*><input\s+id="p-meter-4"\s+name="metered_meter_4"/,
    );

    // Empty rows are left out; an empty package size is 1.
    const created = await owner.submit(`${base}/products`, {
      _action: 'create',
      name: 'Usage Plan',
      type: 'SUBSCRIPTION',
      interval: 'month',
      interval_count: '1',
      price: '199',
      ...rows([0, 'api_calls', '2', '1000'], [2, 'seats', '120', '']),
    });
    expect(created.status).toBe(303);
    const id = created.location!.split('/').pop()!;
    const path = `${base}/products/${id}`;
    const productOf = async () => (await shop.send('GET', `/products/${id}`)).body;
    const set = [
      { meter: 'api_calls', unit_amount: 2, package_size: 1000 },
      { meter: 'seats', unit_amount: 120, package_size: 1 },
    ];
    expect((await productOf()).metered_prices).toEqual(set);
    const page = (await owner.get(path)).html;
    expect(page).toContain('api_calls: NT$2 per 1,000 units, rounded up<br />seats: NT$120 per unit');
    expect(page).toContain('<legend>Metered prices (optional)</legend>');
    expect(page).toMatch(/id="p-meter-0"\s+name="metered_meter_0"\s+type="text"\s+value="api_calls"/);
    expect(page).toMatch(/id="p-meter-size-0"\s+name="metered_package_size_0"\s+type="number"\s+value="1000"/);
    expect(page).toMatch(/id="p-meter-1"\s+name="metered_meter_1"\s+type="text"\s+value="seats"/);
    expect(page).toMatch(/id="p-meter-2"\s+name="metered_meter_2"\s+type="text"\s+autocomplete/);

    // A meter key with a space: refused at its row (the fourth; the API's second price), nothing changed.
    const bad = await owner.submit(path, {
      _action: 'update',
      name: 'Usage Plan',
      price: '249',
      ...rows([0, 'api_calls', '3', ''], [3, 'api calls', '5', '10']),
    });
    expect(bad.status).toBe(422);
    expect(bad.html).toMatch(/<p class="error" role="alert" id="error-update">/);
    expect(bad.html).toMatch(
      /id="p-meter-3"\s+name="metered_meter_3"\s+type="text"\s+value="api calls"\s+aria-describedby="p-meter-3-error"\s+aria-invalid="true"/,
    );
    expect(bad.html).toMatch(/<div class="field-error" id="p-meter-3-error">[^<]*meter key/);
    expect(bad.html).not.toMatch(/id="p-meter-0"[^>]*aria-invalid/);
    expect(bad.html).toMatch(/id="p-meter-amount-0"\s+name="metered_unit_amount_0"\s+type="number"\s+value="3"/);
    expect(await productOf()).toMatchObject({ price: 199, metered_prices: set });

    // Two rows for one meter: the API's problem with the whole list is shown over the rows.
    const twice = await owner.submit(path, {
      _action: 'update',
      name: 'Usage Plan',
      price: '199',
      ...rows([0, 'seats', '1', ''], [1, 'seats', '2', '']),
    });
    expect(twice.status).toBe(422);
    expect(twice.html).toMatch(/<fieldset aria-describedby="p-metered-hint p-metered-error">/);
    expect(twice.html).toMatch(/<div class="field-error" id="p-metered-error">each meter is priced once<\/div>/);
    expect((await productOf()).metered_prices).toEqual(set);

    const changed = await owner.submit(path, {
      _action: 'update',
      name: 'Usage Plan',
      price: '249',
      ...rows([1, 'storage.gb', '30', ''], [4, 'seats', '100', '5']),
    });
    expect(changed.status).toBe(303);
    expect(await productOf()).toMatchObject({
      price: 249,
      metered_prices: [
        { meter: 'storage.gb', unit_amount: 30, package_size: 1 },
        { meter: 'seats', unit_amount: 100, package_size: 5 },
      ],
    });

    // In zh-TW the rows are labelled in Chinese.
    await owner.get(`/dashboard/language/zh-TW?back=${encodeURIComponent(base)}`);
    const zh = (await owner.get(path)).html;
    await owner.get(`/dashboard/language/en?back=${encodeURIComponent(base)}`);
    expect(zh).toContain('<legend>計量計費（選填）</legend>');
    expect(zh).toMatch(/<label for="p-meter-0">計量項目<\/label/);
    expect(zh).toMatch(/<label for="p-meter-amount-0">每單位價格（NT\$，整數）<\/label/);
    expect(zh).toMatch(/<label for="p-meter-size-0">每包數量（單位；空白為 1）<\/label/);

    // Every row emptied: the plan bills no usage.
    expect((await owner.submit(path, { _action: 'update', name: 'Usage Plan', price: '249', ...rows() })).status).toBe(
      303,
    );
    expect((await productOf()).metered_prices).toBeNull();

    // A product other than a plan takes no metered prices: rows filled for it are refused, not dropped.
    const filled = await owner.submit(`${base}/products`, {
      _action: 'create',
      name: 'Setup fee',
      type: 'ONE_TIME',
      price: '1000',
      ...rows([0, 'api_calls', '1', '']),
    });
    expect(filled.status).toBe(422);
    expect(filled.html).toContain('metered_prices');
    const once = await owner.submit(`${base}/products`, {
      _action: 'create',
      name: 'Setup fee',
      type: 'ONE_TIME',
      price: '1000',
      ...rows(),
    });
    expect(once.status).toBe(303);
    const onceId = once.location!.split('/').pop()!;
    expect((await shop.send('GET', `/products/${onceId}`)).body.metered_prices).toBeNull();
    expect((await owner.get(`${base}/products/${onceId}`)).html).not.toContain('metered_meter_0');
  });
});

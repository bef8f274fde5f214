import type { Browser, Locator, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium, expectAccessible, textOf } from '../src/browser';
import { createUser } from '../src/dashboard-helpers';
import { lifecycleOrganization } from '../src/lifecycle-helpers';
import { type Platform, startPlatform } from '../src/platform';

jest.setTimeout(180000);

declare const window: any;

const PASSWORD = 'correct horse battery';

/**
 * The credits settings and a plan's allowance in the dashboard, in Chromium at 375 px, in
 * English and in zh-TW: the owner sets the threshold and the overdraft limit (a bad value refused
 * at its field), a member reads them, and a plan is saved with its rollover and a metered price
 * (a meter key with a space refused at its field); axe finds no serious violation and nothing is
 * wider than the screen. DASHBOARD_SCREENSHOTS=1 keeps /tmp/dash-credits-<page>-<language>.png.
 */
describeWithBrowser('credits settings in the merchant dashboard, in a browser', () => {
  let platform: Platform;
  let browser: Browser;

  beforeAll(async () => {
    [platform, browser] = await Promise.all([
      startPlatform({ checkout: true, billing: true, config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' } }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('sets and shows the credits settings and a plan rollover at 375 px, in English and zh-TW', async () => {
    const shop = await lifecycleOrganization(platform);
    await createUser(platform.gatewayUrl, shop.org.id, 'mei@shop.example', 'owner', PASSWORD);
    await createUser(platform.gatewayUrl, shop.org.id, 'hank@shop.example', 'member', PASSWORD);
    const base = `${platform.gatewayUrl}/dashboard/${shop.org.id}/sandbox`;
    const signIn = async (email: string) => {
      const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 800 } });
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      await page.goto(`${platform.gatewayUrl}/dashboard/login`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(/\/sandbox$/);
      return page;
    };
    /** Accessible, nothing wider than the phone's screen, kept as a picture when asked. */
    const look = async (page: Page, name: string, part: Locator) => {
      await expectAccessible(page);
      const overflow = await page.evaluate(() => window.document.documentElement.scrollWidth - window.innerWidth);
      expect({ name, overflow }).toEqual({ name, overflow: 0 });
      const lang = await page.getAttribute('html', 'lang');
      if (process.env.DASHBOARD_SCREENSHOTS) await part.screenshot({ path: `/tmp/dash-credits-${name}-${lang}.png` });
    };

    const owner = await signIn('mei@shop.example');
    await owner.goto(`${base}/settings`);
    let form = owner.getByRole('form', { name: 'Credits (Sandbox)' });
    await form.getByLabel('Low-balance threshold').fill('100');
    await form.getByLabel('Overdraft limit').fill('-5');
    await form.getByRole('button', { name: 'Save credits settings' }).click();
    await owner.waitForLoadState();
    form = owner.getByRole('form', { name: 'Credits (Sandbox)' });
    expect(await form.getByLabel('Overdraft limit').getAttribute('aria-invalid')).toBe('true');
    await look(owner, 'settings-refused', form);
    await form.getByLabel('Overdraft limit').fill('250');
    await form.getByRole('button', { name: 'Save credits settings' }).click();
    await owner.waitForLoadState();
    expect(await textOf(owner.getByRole('status'))).toContain('Credits settings saved.');
    form = owner.getByRole('form', { name: 'Credits (Sandbox)' });
    expect(await form.getByLabel('Overdraft limit').inputValue()).toBe('250');
    await look(owner, 'settings', form);

    await owner.goto(`${base}/products`);
    const create = owner.locator('form', { has: owner.getByRole('button', { name: 'Create product' }) });
    await create.getByLabel('Name', { exact: true }).fill('Pro');
    await create.getByLabel('Type').selectOption('SUBSCRIPTION');
    await create.getByLabel('Price (whole TWD)').fill('499');
    await create.getByLabel(/^Credits a purchase or each paid period grants/).fill('1000');
    await create.getByLabel(/unused credits carry over/).check();
    const firstPrice = create.getByRole('group', { name: 'Metered price 1' });
    await firstPrice.getByLabel('Meter key').fill('api_calls');
    await firstPrice.getByLabel('Unit amount (whole NT$)').fill('2');
    await firstPrice.getByLabel('Package size (units; empty: 1)').fill('100');
    await create.getByRole('button', { name: 'Create product' }).click();
    await owner.waitForURL(/\/products\/prod_/);
    const facts = owner.getByRole('region', { name: 'Product' });
    expect(await textOf(facts)).toContain('1,000 credits each paid period; unused credits carry over');
    expect(await textOf(facts)).toContain('api_calls: NT$2 per 100 units, rounded up');
    let edit = owner.getByRole('form', { name: 'Edit' });
    expect(await edit.getByLabel('Unused credits carry over to the next period (rollover)').isChecked()).toBe(true);
    await look(owner, 'plan', edit);

    // A meter key with a space is refused at its field.
    const planUrl = owner.url();
    const secondPrice = edit.getByRole('group', { name: 'Metered price 2' });
    await secondPrice.getByLabel('Meter key').fill('api calls');
    await secondPrice.getByLabel('Unit amount (whole NT$)').fill('5');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await owner.waitForLoadState();
    edit = owner.getByRole('form', { name: 'Edit' });
    const refusedKey = edit.getByRole('group', { name: 'Metered price 2' }).getByLabel('Meter key');
    expect(await refusedKey.getAttribute('aria-invalid')).toBe('true');
    await look(owner, 'plan-refused', edit);
    await owner.goto(planUrl);

    await owner.getByRole('link', { name: '中文' }).click();
    await owner.waitForLoadState();
    expect(await owner.getAttribute('html', 'lang')).toBe('zh-TW');
    expect(await textOf(owner.getByRole('region', { name: '商品' }))).toContain(
      '每個付費週期 1,000 點，未用完的點數會延續',
    );
    await look(owner, 'plan', owner.getByRole('form', { name: '編輯' }));
    await owner.goto(`${base}/settings`);
    const zh = owner.getByRole('form', { name: '點數（測試環境）' });
    expect(await zh.getByLabel('透支上限（點；0 表示餘額不會低於零）').inputValue()).toBe('250');
    await look(owner, 'settings', zh);

    const member = await signIn('hank@shop.example');
    await member.goto(`${base}/settings`);
    const read = member.getByRole('form', { name: 'Credits (Sandbox)' });
    expect(await textOf(read)).toContain('Low-balance threshold 100 credits Overdraft limit 250 credits');
    expect(await textOf(read)).toContain('Only an owner can change the credits settings.');
    await look(member, 'settings-member', read);
    await member.getByRole('link', { name: '中文' }).click();
    await member.waitForLoadState();
    const readZh = member.getByRole('form', { name: '點數（測試環境）' });
    expect(await textOf(readZh)).toContain('低餘額門檻 100 點 透支上限 250 點');
    await look(member, 'settings-member', readZh);
  });
});

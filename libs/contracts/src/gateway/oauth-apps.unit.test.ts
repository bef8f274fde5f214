import { CreateOAuthAppBody, redirectUriProblem } from './oauth-apps';

describe('redirectUriProblem', () => {
  it.each([
    'https://books.example/oauth/callback',
    'https://books.example:8443/cb?tenant=1',
    'http://127.0.0.1:3000/callback',
    'http://localhost/callback',
    'http://[::1]:8080/cb',
  ])('accepts %s', (uri) => expect(redirectUriProblem(uri)).toBeUndefined());

  it.each([
    ['http://books.example/cb', 'must use https (http only on 127.0.0.1 or localhost)'],
    ['http://127.0.0.1.evil.example/cb', 'must use https (http only on 127.0.0.1 or localhost)'],
    ['https://books.example/cb#done', 'must not have a fragment'],
    ['https://books.example/cb#', 'must not have a fragment'],
    ['https://user:pw@books.example/cb', 'must not hold credentials'],
    ['/callback', 'must be an absolute URL'],
    ['javascript:alert(1)', 'must use https (http only on 127.0.0.1 or localhost)'],
    ['custom-app://callback', 'must use https (http only on 127.0.0.1 or localhost)'],
  ])('refuses %s', (uri, problem) => expect(redirectUriProblem(uri)).toBe(problem));
});

describe('CreateOAuthAppBody', () => {
  it('names each refused redirect URI at its path', () => {
    const parsed = CreateOAuthAppBody.safeParse({
      name: 'Books',
      environment: 'SANDBOX',
      redirect_uris: ['https://ok.example/cb', 'http://books.example/cb'],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues).toEqual([
      expect.objectContaining({ path: ['redirect_uris', 1], message: expect.stringContaining('must use https') }),
    ]);
  });

  it('needs at least one redirect URI', () => {
    expect(CreateOAuthAppBody.safeParse({ name: 'Books', environment: 'SANDBOX', redirect_uris: [] }).success).toBe(
      false,
    );
  });
});

import { ADMIN_TOKEN, clientOf } from './platform';

export interface PageReply {
  status: number;
  location: string | null;
  html: string;
  setCookies: string[];
}

/** A browser without a browser: keeps the dashboard's cookies, reads forms' CSRF tokens, posts forms. */
export class DashboardAgent {
  private readonly cookies = new Map<string, string>();

  /** The agent's cookies as a request sends them, for a request made outside it (a download). */
  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  constructor(readonly baseUrl: string) {}

  async get(path: string): Promise<PageReply> {
    return this.send(path, { method: 'GET' });
  }

  async post(path: string, fields: Record<string, string>): Promise<PageReply> {
    return this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Reads the page's CSRF token and posts the form with it. */
  async submit(path: string, fields: Record<string, string>): Promise<PageReply> {
    const page = await this.get(path);
    return this.post(path, { _csrf: csrfOf(page.html), _idem: `${Date.now()}-${Math.random()}`, ...fields });
  }

  async signIn(fields: Record<string, string>): Promise<PageReply> {
    const page = await this.get('/dashboard/login');
    return this.post('/dashboard/login', { _csrf: csrfOf(page.html), ...fields });
  }

  private async send(path: string, init: RequestInit): Promise<PageReply> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${this.baseUrl}${path}`, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie && { cookie }) },
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/Max-Age=0/.test(line)) this.cookies.delete(name!);
      else this.cookies.set(name!, value.join('='));
    }
    return {
      status: response.status,
      location: response.headers.get('location'),
      html: await response.text(),
      setCookies,
    };
  }
}

export function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no CSRF token in page: ${html.slice(0, 300)}`);
  return token;
}

/** A dashboard user made by the operator through the admin API. */
export async function createUser(
  baseUrl: string,
  orgId: string,
  email: string,
  role: 'owner' | 'member',
  password?: string,
) {
  const created = await clientOf(baseUrl).admin(
    'POST',
    `/organizations/${orgId}/users`,
    { email, role, password },
    ADMIN_TOKEN,
  );
  if (created.status !== 201) throw new Error(`user not created: ${JSON.stringify(created.body)}`);
  return created.body as { id: string; email: string; invite_path?: string };
}

export async function signedIn(baseUrl: string, email: string, password: string): Promise<DashboardAgent> {
  const agent = new DashboardAgent(baseUrl);
  const reply = await agent.signIn({ email, password });
  if (reply.status !== 303) throw new Error(`sign-in failed: ${reply.status} ${reply.html.slice(0, 500)}`);
  return agent;
}

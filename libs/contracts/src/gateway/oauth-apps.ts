import { z } from 'zod';
import { Environment } from '../events/envelope';

/** Hosts where an app under development may receive its code over plain http. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Why an app may not register `uri` as a redirect URI, or undefined when it may: an absolute
 * https URL, or http on the loopback for development; no fragment (RFC 6749 3.1.2), no
 * credentials. The authorization server then compares a request's redirect_uri with the
 * registered ones exactly, character for character.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (!URL.canParse(uri)) return 'must be an absolute URL';
  const url = new URL(uri);
  if (url.hash || uri.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not hold credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must use https (http only on 127.0.0.1 or localhost)';
}

const RedirectUri = z
  .string()
  .max(2000)
  .superRefine((uri, ctx) => {
    const problem = redirectUriProblem(uri);
    if (problem) ctx.addIssue({ code: 'custom', message: `redirect URI ${problem}` });
  });

export const CreateOAuthAppBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    environment: Environment,
    redirect_uris: z.array(RedirectUri).min(1).max(10),
  })
  .meta({ id: 'CreateOAuthAppBody' });

export const OAuthApp = z
  .object({
    object: z.literal('oauth_app'),
    id: z.string().describe('The client_id'),
    client_id: z.string(),
    name: z.string(),
    environment: Environment,
    redirect_uris: z.array(z.string()),
    created_at: z.string(),
    connections: z
      .array(
        z.object({
          user_id: z.string().describe('The dashboard user who approved the app'),
          scopes: z.array(z.string()),
          connected_at: z.string(),
        }),
      )
      .describe("The grants the organization's owners gave the app, latest first"),
  })
  .meta({ id: 'OAuthApp' });

export const CreatedOAuthApp = OAuthApp.extend({
  client_secret: z.string().describe('Shown once, in this answer only'),
}).meta({ id: 'CreatedOAuthApp' });

export const OAuthAppParams = z.object({
  org_id: z.string().min(1).max(255),
  client_id: z.string().min(1).max(255).describe('prefix app_'),
});

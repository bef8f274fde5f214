import {
  ApiError,
  asPortalError,
  CreatePortalSessionBody,
  PortalLocale,
  PortalSessionIdParams,
  idText,
  detailsFromZodIssues,
  normalizePortalSessionBody,
  notFound,
  portalError,
} from '@billing/contracts';
import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import { z } from 'zod';
import { DEFAULT_BODY_LIMIT, secretCallerOf, toApiError, validate } from '@billing/service';
import type { ErrorRequestHandler, Express } from 'express';
import { createPortalSession, toPortalSession } from './create';
import { findPortalSession } from './read-model';

/** The body in either naming, checked; every failure is the spec's 400 `invalid_param`. */
function parseBody(raw: unknown): CreatePortalSessionBody {
  const { body, conflicts } = normalizePortalSessionBody(raw ?? {});
  if (conflicts.length > 0) {
    throw portalError(
      'invalid_param',
      `Both names given with different values: ${conflicts.join(', ')}`,
      conflicts.map((path) => ({
        path,
        message: 'given in snake_case and camelCase with different values',
        code: 'conflict',
      })),
    );
  }
  const parsed = CreatePortalSessionBody.safeParse(body);
  if (!parsed.success) {
    const details = detailsFromZodIssues(parsed.error.issues);
    const names = [...new Set(details.map((d) => d.path || '(body)'))].join(', ');
    throw portalError('invalid_param', `Invalid parameter: ${names}`, details);
  }
  return parsed.data;
}

/** Notifications' ask for a failed-payment email's portal link. */
const EmailPortalLinkBody = z.strictObject({ customer_id: idText().min(1), locale: PortalLocale.optional() });

/** `POST /v1/portal/sessions` and `GET /v1/portal/sessions/{id}` (Secret Key only). */
export function mountPortalSessionRoutes(app: Express, context: ServiceContext): void {
  const { store } = context;
  app.post('/v1/portal/sessions', async (req, res) => {
    const caller = secretCallerOf(req);
    const tenant = { organization: caller.organization, environment: caller.environment };
    const session = await createPortalSession(context, tenant, parseBody(req.body));
    res.status(201).json(session);
  });

  app.get('/v1/portal/sessions/:id', async (req, res) => {
    const caller = secretCallerOf(req);
    const parsed = PortalSessionIdParams.safeParse(req.params);
    if (!parsed.success)
      throw portalError('invalid_param', 'Invalid path parameter: id', detailsFromZodIssues(parsed.error.issues));
    const stored = await findPortalSession(store.database, store.tables.schema, caller, parsed.data.id);
    if (!stored) throw notFound(`No such portal session: ${parsed.data.id}`);
    res.json(toPortalSession(context, stored, context.now()));
  });

  /**
   * Notifications' failed-payment email: a session that lives as long as an email is read
   * (`EMAIL_PORTAL_LINK_LIFETIME_MS`, 7 days), its URL on the card page.
   */
  app.post('/internal/portal/sessions/for-email', validate({ body: EmailPortalLinkBody }), async (req, res) => {
    const caller = secretCallerOf(req);
    const tenant = { organization: caller.organization, environment: caller.environment };
    const body = res.locals.input.body as z.infer<typeof EmailPortalLinkBody>;
    const session = await createPortalSession(
      context,
      tenant,
      { customer_id: body.customer_id, ...(body.locale && { locale: body.locale }) },
      { lifetimeMs: emailPortalLinkLifetimeMs(context), returnToPortal: true },
    );
    res.status(201).json({ url: `${session.url}/payment_method`, expires_at: session.expires_at });
  });

  app.use('/v1/portal', portalErrorCodes);
}

/** A week: long enough to act on an email, short enough that an old one opens nothing. */
const DEFAULT_EMAIL_PORTAL_LINK_LIFETIME_MS = 7 * 24 * 60 * 60_000;
const emailPortalLinkLifetimeMs = ({ config }: ServiceContext) =>
  positiveNumberSetting(config, 'EMAIL_PORTAL_LINK_LIFETIME_MS', DEFAULT_EMAIL_PORTAL_LINK_LIFETIME_MS);

/** Portal-session errors in the spec's codes, with `error.type` (`asPortalError`). */
export const portalErrorCodes: ErrorRequestHandler = (err, _req, _res, next) => {
  const error = toApiError(err, DEFAULT_BODY_LIMIT);
  // Our own failures go on as they are, so the shared handler logs what happened.
  if (error.status >= 500 && !(err instanceof ApiError)) return next(err);
  next(asPortalError(error));
};

import {
  EMAIL_KINDS,
  type EmailKind,
  EmailSettingsQuery,
  type Environment,
  MailboxQuery,
  UpdateEmailSettingsBody,
  idText,
  notFound,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { type EmailRow, disabledKinds, emailTables, saveDisabledKinds } from './outbox';

const Id = z.object({ id: idText().min(1) });

/** An email as the mailbox shows it. */
const emailResource = (row: EmailRow) => ({
  object: 'email',
  id: row.id,
  kind: row.kind,
  status: row.status,
  to: row.to_address,
  locale: row.locale,
  subject: row.subject,
  text: row.text_body,
  html: row.html_body,
  event_id: row.event_id,
  customer_id: row.customer_id,
  attempts: row.attempts,
  error: row.error,
  created_at: row.created_at.toISOString(),
  sent_at: row.sent_at?.toISOString() ?? null,
  livemode: row.environment === 'PRODUCTION',
});

const settingsResource = (environment: Environment, disabled: EmailKind[]) => ({
  object: 'email_settings',
  environment,
  ...Object.fromEntries(EMAIL_KINDS.map((kind) => [kind, !disabled.includes(kind)])),
});

/**
 * The mailbox (every email written to buyers: sent, kept in Sandbox, failed) and which emails
 * an organization sends, for the admin API and the dashboard.
 */
export function mountEmailRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const t = emailTables(schema);
  const db = store.database;

  app.get('/admin/emails', validate({ query: MailboxQuery }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const { environment, limit, starting_after } = res.locals.input.query as z.infer<typeof MailboxQuery>;
    const { rows } = await db.query<EmailRow>(
      `SELECT * FROM ${t.emails} WHERE organization = $1 AND environment = $2
         AND ($3::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM ${t.emails} WHERE id = $3))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [organization, environment, starting_after ?? null, limit + 1],
    );
    const page = rows.slice(0, limit);
    res.json({
      object: 'list',
      data: page.map(emailResource),
      has_more: rows.length > limit,
      next_cursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
      livemode: environment === 'PRODUCTION',
    });
  });

  app.get('/admin/emails/:id', validate({ params: Id }), async (req, res) => {
    const { id } = res.locals.input.params as z.infer<typeof Id>;
    const { rows } = await db.query<EmailRow>(`SELECT * FROM ${t.emails} WHERE id = $1 AND organization = $2`, [
      id,
      adminOrganizationOf(req),
    ]);
    if (!rows[0]) throw notFound(`No such email: ${id}`);
    res.json(emailResource(rows[0]));
  });

  app.get('/admin/email_settings', validate({ query: EmailSettingsQuery }), async (req, res) => {
    const { environment } = res.locals.input.query as z.infer<typeof EmailSettingsQuery>;
    const tenant = { organization: adminOrganizationOf(req), environment };
    res.json(settingsResource(environment, await disabledKinds(db, schema, tenant)));
  });

  /** Switches kinds on (true) or off (false); kinds not named keep their setting. */
  app.patch('/admin/email_settings', validate({ body: UpdateEmailSettingsBody }), async (req, res) => {
    const { environment, ...changes } = res.locals.input.body as z.infer<typeof UpdateEmailSettingsBody>;
    const tenant = { organization: adminOrganizationOf(req), environment };
    const disabled = new Set(await disabledKinds(db, schema, tenant));
    for (const kind of EMAIL_KINDS) {
      if (changes[kind] === true) disabled.delete(kind);
      if (changes[kind] === false) disabled.add(kind);
    }
    await saveDisabledKinds(db, schema, tenant, [...disabled], now());
    res.json(settingsResource(environment, [...disabled]));
  });
}

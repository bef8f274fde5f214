import { randomBytes } from 'node:crypto';
import type { Environment } from '@billing/contracts';
import type { Request, Response } from 'express';
import type { GatewayClient } from './client';
import { type Html, html } from '@billing/service';
import type { DashboardLanguage, Translate } from './i18n';
import type { Session } from './store';

export type EnvSlug = 'sandbox' | 'production';
export const ENVIRONMENTS: Record<EnvSlug, Environment> = { sandbox: 'SANDBOX', production: 'PRODUCTION' };

/** What every page and action of one organization and environment works with. */
export interface PageContext {
  req: Request;
  res: Response;
  session: Session;
  organization: { id: string; name: string };
  environment: Environment;
  envSlug: EnvSlug;
  /** `/dashboard/<org>/<env>`: every link of the page starts here. */
  base: string;
  api: GatewayClient;
  role: 'operator' | 'owner' | 'member';
  params: Record<string, string>;
  /** The gateway's clock. */
  now: () => Date;
  query: Record<string, string>;
  /** The user's language (`i18n.ts`) and its words. */
  language: DashboardLanguage;
  t: Translate;
}

export interface PageState {
  /** Per action: the error to show next to its form. */
  errors: Record<string, string>;
  notice?: string;
  /** Shown once after an action (a new key, a new secret, an invitation link). */
  reveal?: Html;
  /** The values the failed form had, to fill it again. */
  form?: Record<string, string>;
  /** The failed form's problems by field (the API's `details[].path`), shown at each field. */
  fieldErrors?: Record<string, string>;
}

export interface ActionOutcome {
  notice: string;
  /** Where to go after the action (a path under `base`, or absolute); by default the same page. */
  redirect?: string;
  /** Rendered at once instead of redirecting: what must be seen only this once. */
  reveal?: Html;
}

export interface Action {
  /** Members are refused (403): keys and users. */
  ownerOnly?: boolean;
  run(ctx: PageContext, form: Record<string, string>): Promise<ActionOutcome>;
}

export interface DashboardPage {
  /** Under `base`: '' for the overview, 'products', 'customers/:id'. */
  path: string;
  /** The section in the navigation this page belongs to. */
  section: string;
  title(ctx: PageContext): string;
  view(ctx: PageContext, state: PageState): Promise<Html>;
  actions?: Record<string, Action>;
  sandboxOnly?: boolean;
}

/** A hidden-field pair every form carries: the CSRF token, the action, and a key for idempotent POSTs. */
export function formFields(ctx: PageContext, action: string): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.session.csrfToken}" /><input
      type="hidden"
      name="_action"
      value="${action}"
    /><input type="hidden" name="_idem" value="${randomBytes(12).toString('hex')}" />`;
}

/** The error an action left, shown where its form is. */
export function errorFor(state: PageState, action: string): Html {
  const message = state.errors[action];
  return message ? html`<p class="error" role="alert" id="error-${action}">${message}</p>` : html``;
}

/** The problem the API found with one field of a failed action, if any. */
export function fieldError(state: PageState, action: string, path: string): string | undefined {
  return state.form?._action === action ? state.fieldErrors?.[path] : undefined;
}

/** A field's error (`aria-invalid`, and its message tied to it), or nothing. */
function invalid(id: string, error: string | undefined): { attributes: Html; message: Html; describedBy?: string } {
  if (!error) return { attributes: html``, message: html`` };
  return {
    attributes: html` aria-invalid="true"`,
    message: html`<div class="field-error" id="${id}-error">${error}</div>`,
    describedBy: `${id}-error`,
  };
}

/** A one-button form (archive, deactivate, replay...). */
export function buttonForm(
  ctx: PageContext,
  action: string,
  label: string,
  fields: Record<string, string> = {},
  options: { confirm?: string; danger?: boolean; path?: string; accessibleName?: string } = {},
): Html {
  const hidden = Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  );
  return html`<form
    class="inline"
    method="post"
    action="${options.path ?? ctx.req.baseUrl + ctx.req.path}"
    ${options.confirm ? html` data-confirm="${options.confirm}"` : ''}
  >
    ${formFields(ctx, action)}${hidden}<button
      type="submit"
      ${options.danger ? html` class="danger"` : ''}${
        options.accessibleName ? html` aria-label="${options.accessibleName}"` : ''
      }
    >
      ${label}
    </button>
  </form>`;
}

/** A labelled input; `id` ties the label to it. */
export function field(
  id: string,
  label: string,
  input: {
    name: string;
    type?: string;
    value?: string | number | null;
    required?: boolean;
    extra?: Html;
    hint?: string;
    /** The API's problem with this field, shown under it. */
    error?: string;
  },
): Html {
  const hintId = input.hint ? `${id}-hint` : undefined;
  const problem = invalid(id, input.error);
  const describedBy = [hintId, problem.describedBy].filter(Boolean).join(' ');
  return html`<label for="${id}">${label}</label
    ><input
      id="${id}"
      name="${input.name}"
      type="${input.type ?? 'text'}"
      ${
        input.value !== undefined && input.value !== null ? html` value="${String(input.value)}"` : ''
      }${input.required ? html` required` : ''}${describedBy ? html` aria-describedby="${describedBy}"` : ''}${problem.attributes}${input.extra ?? ''}
    />${problem.message}${input.hint ? html`<div class="muted" id="${hintId}">${input.hint}</div>` : ''}`;
}

export function select(
  id: string,
  label: string,
  name: string,
  options: Array<[string, string]>,
  selected?: string,
  error?: string,
): Html {
  const problem = invalid(id, error);
  return html`<label for="${id}">${label}</label
    ><select
      id="${id}"
      name="${name}"
      ${problem.describedBy ? html` aria-describedby="${problem.describedBy}"` : ''}${problem.attributes}
    >
      ${options.map(
        ([value, text]) => html`<option value="${value}" ${value === selected ? html` selected` : ''}>${text}</option>`,
      )}</select
    >${problem.message}`;
}

/** A table that scrolls sideways on a phone rather than overflowing the page. */
/** Who paid: their customer page under their email when billing knows them, else the email they gave. */
export const customerLink = (ctx: PageContext, customerId: string | null, email: string | null): Html | string =>
  customerId ? html`<a href="${ctx.base}/customers/${customerId}">${email ?? customerId}</a>` : (email ?? '—');

export function table(caption: string, headers: string[], rows: Html[], empty = 'Nothing yet.'): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<div class="table" role="region" aria-label="${caption}" tabindex="0">
    <table>
      <caption class="muted">
        ${caption}
      </caption>
      <thead>
        <tr>
          ${headers.map((h) => html`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`;
}

/** Cursor paging: a link to the next page after the last item, and back to the first. */
export function pager(
  ctx: PageContext,
  hasMore: boolean,
  lastId: string | undefined,
  extra: Record<string, string> = {},
): Html {
  const first = new URLSearchParams(extra).toString();
  const next = new URLSearchParams({ ...extra, after: lastId ?? '' }).toString();
  const here = ctx.req.baseUrl + ctx.req.path;
  return html`<nav class="pager" aria-label="${ctx.t('Pages')}">
    ${ctx.query.after ? html`<a href="${here}${first ? `?${first}` : ''}">${ctx.t('First page')}</a>` : ''}${
      hasMore && lastId ? html`<a href="${here}?${next}">${ctx.t('Next page')}</a>` : ''
    }
  </nav>`;
}

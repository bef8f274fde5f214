import type { PortalBusinessProfile, PortalFeatures, PortalLocale } from '@billing/contracts';
import type { Tenant } from '@billing/service';
import type { StoredPortalSession } from '../sessions/read-model';
import type { Messages } from './i18n';

/** An open, active portal session and what its pages need. */
export interface OpenPortal {
  session: StoredPortalSession;
  tenant: Tenant;
  locale: PortalLocale;
  t: Messages;
  csrfToken: string;
  /** The page's own path, `/portal/<id>/<token>`; actions are under it. */
  base: string;
  features: PortalFeatures;
  businessProfile: PortalBusinessProfile;
  livemode: boolean;
}

import { z } from 'zod';

/**
 * `gateway.events`, stream `organization-<id>` (schema version 1): what other services may
 * replicate of an organization. Key events (`ApiKeyIssued`, `ApiKeyRevoked`) are the
 * gateway's own and not described here.
 */
export const ORGANIZATION_EVENTS = {
  OrganizationCreated: 'OrganizationCreated',
  OrganizationSettingsUpdated: 'OrganizationSettingsUpdated',
} as const;

export const OrganizationCreatedData = z
  .object({ organization_id: z.string(), name: z.string(), created_at: z.iso.datetime() })
  .meta({ id: 'OrganizationCreatedData' });
export type OrganizationCreatedData = z.infer<typeof OrganizationCreatedData>;

/** Only the fields that changed (`PATCH /admin/v1/organizations/{id}`). */
export const OrganizationSettingsUpdatedData = z
  .object({
    organization_id: z.string(),
    name: z.string().optional(),
    allowed_origins: z.array(z.string()).optional().describe('Origins whose pages may use the Publishable Key; [] any'),
    logo_url: z.string().nullable().optional().describe('Shown on the hosted pages'),
    brand_color: z.string().nullable().optional().describe("#rrggbb, the hosted pages' accent"),
    website_url: z.string().nullable().optional().describe("The merchant's site: the hosted pages' way back"),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'OrganizationSettingsUpdatedData' });
export type OrganizationSettingsUpdatedData = z.infer<typeof OrganizationSettingsUpdatedData>;

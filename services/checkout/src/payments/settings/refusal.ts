import { ApiError, type Environment } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf } from '../../dependencies';
import { type StoredProcessor, storedProcessor } from './aggregate';

/** Why a buyer's payment is refused before anything is charged: the codes the hosted pages translate. */
export const PROCESSOR_NOT_CONFIGURED = 'processor_not_configured';
export const PROCESSOR_UNAVAILABLE = 'processor_unavailable';

const refused = (code: string, message: string) =>
  ApiError.of('payment_required', message, [{ path: 'payment', code, message }]);

/** Why the simulator's path refuses an organization that pays through a processor of its own. */
const ELSEWHERE = {
  ecpay:
    "This organization pays through ECPay, which takes one-time checkouts on the hosted page (card, ATM or convenience-store code on ECPay's pages); this payment is not one of those (docs/payments.md)",
  payuni:
    "This organization pays through PAYUNi, which takes cards in PAYUNi's card fields on the hosted page and in embedded checkouts, and charges the cards saved there; this payment is not one of those (docs/payments.md)",
} as const;

/**
 * 402 before anything is charged unless the organization's processor in this environment is
 * one checkout charges through: the simulator (Sandbox, or Production only in the demo mode
 * SANDBOX_PROCESSOR_IN_PRODUCTION=demo). Production without a processor names what the
 * merchant must do; the hosted pages show the buyer their own sentence for the code.
 */
export async function refuseUnlessChargeable(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  /** The settings as this request read them already, if it did. */
  stored?: StoredProcessor,
): Promise<void> {
  const { processor } = dependenciesOf(context);
  const { settings } = stored ?? (await storedProcessor(context.store, organization, environment));
  const elsewhere = ELSEWHERE[settings.processor as keyof typeof ELSEWHERE];
  if (elsewhere) throw refused(PROCESSOR_UNAVAILABLE, elsewhere);
  const simulatorRefusal = processor.refusal(environment);
  if (!simulatorRefusal) return;
  if (settings.processor === 'none') {
    throw refused(
      PROCESSOR_NOT_CONFIGURED,
      'Production payments are off until the organization sets a payment processor: in the dashboard under Settings > Payments, or PUT /admin/v1/organizations/{org_id}/payment_processor?environment=production (docs/payments.md)',
    );
  }
  throw refused(PROCESSOR_UNAVAILABLE, simulatorRefusal);
}

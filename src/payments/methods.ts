/**
 * The ways money comes in, one module each (src/domain/billing/payment-registry.ts; what a method
 * does is the PaymentMethod of src/context.ts). The union of method names, the body checks,
 * autopay's dispatch and the OpenAPI enum all derive from this list.
 */
export const PAYMENT_METHODS = ['apusd', 'fiat_card'] as const;
export type PaymentMethodName = (typeof PAYMENT_METHODS)[number];

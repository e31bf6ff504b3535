import type { PaymentMethods } from '../../context.js';
import { apusdMethod } from './apusd-method.js';
import { cardMethod } from './card-funding.js';

/** Every payment method of drm, by name: the context holds this, and nothing adds to it later. */
export const paymentMethods: PaymentMethods = { apusd: apusdMethod, fiat_card: cardMethod };

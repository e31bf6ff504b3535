import type Stripe from 'stripe';
import type { FiatConfig } from './config.js';

export type CardProcessor = Stripe;

/** The official SDK, configured for the deployment (loaded on first use: most commands never need it). */
export async function cardProcessor(config: FiatConfig): Promise<CardProcessor> {
  const { default: StripeSdk } = await import('stripe');
  return new StripeSdk(config.secretKey, { maxNetworkRetries: 2, timeout: 20_000, ...(config.apiBase ?? {}) });
}

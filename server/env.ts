import type { KeyAuth } from '../src/domain/auth.js';
import type { RateState } from '../src/domain/rate-limits.js';

/** What middleware hands to route handlers through hono's context. */
export interface AppEnv {
  Variables: {
    auth: KeyAuth;
    rate: RateState;
    admin: { address: string };
    /** the request body as read once (server/body.ts readText) */
    bodyText: string;
    /** the headers every answer to the request carries (server/reply.ts) */
    answerHeaders: Record<string, string>;
    /** the answer reply() made, which has them already */
    replied: Response;
  };
}

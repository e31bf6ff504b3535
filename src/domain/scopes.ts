export const SCOPES = ['catalog', 'stream', 'billing', 'forensics'] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (v: unknown): v is Scope => typeof v === 'string' && (SCOPES as readonly string[]).includes(v);

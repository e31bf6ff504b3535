import { DrmError } from './errors.js';

// An on/off setting's words; its own module so that the CLI's option parsing loads nothing else.

const SWITCH: Record<string, boolean> = {
  '1': true,
  true: true,
  yes: true,
  on: true,
  '0': false,
  false: false,
  no: false,
  off: false,
};

/** An on/off setting as written in a flag's value or an environment variable: 1/0, true/false, yes/no, on/off. */
export function parseSwitch(raw: string, what: string): boolean {
  const v = SWITCH[raw.trim().toLowerCase()];
  if (v === undefined)
    throw new DrmError('BAD_REQUEST', `${what} must be yes or no (1/0, true/false, on/off), got "${raw}"`);
  return v;
}

/** One line of `drm doctor`: what was checked, how it stands, and what to do about it. */
export interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** what to do about it */
  fix?: string;
}

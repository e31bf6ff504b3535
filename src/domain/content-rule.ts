import type { Context } from '../context.js';
import type { ContentRow } from '../db/repos/index.js';
import type { SegmentRule } from '../watermark/segment-rule.js';

/**
 * The segment rule a content item was packaged under: keyed from the deployment's secret, or the
 * fixed one, with the segment length it was cut in.
 */
export function contentRule(
  ctx: Pick<Context, 'keys'>,
  content: Pick<ContentRow, 'id' | 'segmentRule'> & Partial<Pick<ContentRow, 'segmentSeconds'>>,
): SegmentRule {
  return ctx.keys.segmentRules.of(content.segmentRule, content.id, content.segmentSeconds);
}

import type { Context } from '../context.js';
import type { ContentRow } from '../db/repos/index.js';
import type { SegmentRule } from '../watermark/segment-rule.js';

/** The segment rule a content item was packaged under: keyed from the deployment's secret, or the fixed one. */
export function contentRule(ctx: Pick<Context, 'keys'>, content: Pick<ContentRow, 'id' | 'segmentRule'>): SegmentRule {
  return ctx.keys.segmentRules.of(content.segmentRule, content.id);
}

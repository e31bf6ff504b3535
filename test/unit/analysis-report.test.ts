import { describe, expect, it } from 'vitest';
import { type Json, printAnalysis } from '../../commands/analysis-report.js';
import type { Output } from '../../commands/output.js';

// drm analyze names the matched viewer as its organization did (the viewerId it passed), the
// platform's id after it: from the analyze response (local, or --server answering at once) and
// from a case detail that --server polled, in either shape.

const VIEWER = '7f3c1a52-8d0e-4c55-9d7e-0b6c2f9e4a11';
const SESSION = '0c9d8e7f-1111-4222-8333-444455556666';

function printed(body: Json, shapeA?: boolean): string {
  const lines: string[] = [];
  const out: Output = { json: false, write: (t) => lines.push(t), error: (t) => lines.push(t) };
  expect(printAnalysis(out, body, shapeA)).toBe(0);
  return lines.join('\n');
}

const viewerRow = (text: string) => text.split('\n').find((l) => /│ viewer\s/.test(l)) ?? '';

const decided = { caseId: 'c1', status: 'completed', classification: 'strong_match', confidence: 40 };

describe("drm analyze's evidence table", () => {
  it('names the viewer by the external id of the analyze response, the platform id after it', () => {
    const text = printed({
      ...decided,
      matchedSession: { sessionId: SESSION, viewerId: VIEWER, externalViewerId: 'alice', organization: 'Acme' },
      evidenceChain: { viewer: { viewerId: VIEWER, ipAddress: '127.0.0.1' } },
    });
    expect(viewerRow(text)).toMatch(new RegExp(`│ alice \\(platform id ${VIEWER}\\)\\s+│`));
  });

  it('reads the external id off a polled case detail (Shape B, flattened), which has no matchedSession', () => {
    const text = printed({
      ...decided,
      matchedViewerId: VIEWER,
      matchedExternalViewerId: 'alice',
      evidenceChain: { organization: { id: 'o1', name: 'Acme' }, viewer: { viewerId: VIEWER, ipAddress: null } },
    });
    expect(viewerRow(text)).toMatch(new RegExp(`│ alice \\(platform id ${VIEWER}\\)`));
  });

  it('reads it off a Shape A case detail too, whose chain names the viewer by the platform id', () => {
    const text = printed(
      {
        ...decided,
        confidence: 1,
        matchedExternalViewerId: 'alice',
        evidenceChain: { organization: 'Acme', viewer: VIEWER, wallet: '0xabc', content: 'Pan' },
      },
      true,
    );
    expect(viewerRow(text)).toMatch(new RegExp(`│ alice \\(platform id ${VIEWER}\\)`));
  });

  it('shows the platform id alone where no external id is known (a case decided by an older drm)', () => {
    const text = printed({ ...decided, matchedViewerId: VIEWER, evidenceChain: { viewer: { viewerId: VIEWER } } });
    expect(viewerRow(text)).toMatch(new RegExp(`│ ${VIEWER}\\s+│`));
  });
});

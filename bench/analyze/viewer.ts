import type { Context } from '../../src/context.js';
import type { ContentRow } from '../../src/db/repos/index.js';
import { authenticateApiKey } from '../../src/domain/auth.js';
import { grantLicense } from '../../src/domain/licenses.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createSession } from '../../src/domain/streaming.js';

/** An organization licensed to the content and one viewer's session of it, made as the API makes them. */
export async function createViewerSession(
  ctx: Context,
  content: ContentRow,
): Promise<{ binaryId: string; sessionId: string }> {
  const reg = await registerOrganization(ctx, { name: 'Bench Films', email: 'bench@example.test' }, 'professional');
  await grantLicense(ctx, reg.organization.id, { contentId: content.id, contentType: content.type });
  const auth = await authenticateApiKey(ctx, reg.apiKey);
  const created = await createSession(
    ctx,
    auth,
    content.id,
    { viewerId: 'bench-viewer' },
    { ip: '192.0.2.1', userAgent: 'bench' },
  );
  return { binaryId: created.viewer.binaryId, sessionId: created.session.id };
}

import {
  arrayOf,
  bool,
  type Endpoint,
  int,
  jsonBody,
  jsonResponse,
  keyed,
  notFound,
  nullable,
  object,
  pagingParams,
  pathParam,
  queryParam,
  ref,
  str,
  uuid,
} from './build.js';
import { SCHEMA_PARTS } from './schemas-core.js';

// Spec 4.5 (viewers) and 4.6 (webhook management).

const VIEWERS = 'Viewers';
const WEBHOOK = 'Webhooks';
const viewerId = pathParam('viewerId', 'the viewer', uuid());

const viewers: Endpoint[] = [
  {
    method: 'get',
    path: '/api/v1/viewers',
    operation: keyed('stream', VIEWERS, {
      operationId: 'listViewers',
      summary: "The organization's viewers",
      parameters: [
        ...pagingParams(200),
        queryParam('blocked', 'only blocked (true) or only unblocked (false) viewers', {
          type: 'string',
          enum: ['true', 'false'],
        }),
      ],
      responses: {
        '200': jsonResponse(
          'a page of viewers',
          object({ viewers: arrayOf(ref('Viewer')), total: int(), page: int(), limit: int() }),
        ),
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/viewers/search',
    operation: keyed('forensics', VIEWERS, {
      operationId: 'searchViewer',
      summary: 'Find a viewer by binaryId',
      parameters: [queryParam('binaryId', '40 characters of 0 and 1', SCHEMA_PARTS.binaryId, true)],
      responses: { '200': jsonResponse('the viewer', object({ viewer: ref('ViewerSearchResult') })), '404': notFound },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/viewers/{viewerId}',
    operation: keyed('stream', VIEWERS, {
      operationId: 'getViewer',
      summary: 'One viewer with their stream sessions',
      parameters: [viewerId],
      responses: { '200': jsonResponse('the viewer', ref('ViewerDetail')), '404': notFound },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/viewers/{viewerId}/block',
    operation: keyed('stream', VIEWERS, {
      operationId: 'blockViewer',
      summary: 'Block a viewer',
      description: 'The viewer can start no new session and their sessions stop being served; emits viewer.blocked.',
      parameters: [viewerId],
      requestBody: jsonBody(
        object({ reason: str(undefined, { maxLength: 500 }) }, ['reason']),
        { reason: 'leaked a stream' },
        false,
      ),
      responses: { '200': jsonResponse('blocked', ref('Success')), '404': notFound },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/viewers/{viewerId}/unblock',
    operation: keyed('stream', VIEWERS, {
      operationId: 'unblockViewer',
      summary: 'Unblock a viewer',
      parameters: [viewerId],
      responses: { '200': jsonResponse('unblocked', ref('Success')), '404': notFound },
    }),
  },
];

const webhookBody = {
  ...object(
    {
      webhookUrl: nullable(str('http(s) URL; null or "" clears it', { maxLength: 2000 })),
      regenerateSecret: bool('replace the signing secret (the new one is in the answer)'),
    },
    ['webhookUrl', 'regenerateSecret'],
  ),
  anyOf: [
    { required: ['webhookUrl'] },
    { required: ['regenerateSecret'], properties: { regenerateSecret: { const: true } } },
  ],
};

const webhook: Endpoint[] = [
  {
    method: 'put',
    path: '/api/v1/webhook',
    operation: keyed('billing', WEBHOOK, {
      operationId: 'updateWebhook',
      summary: 'Set the webhook URL, replace the secret, or both',
      requestBody: jsonBody(webhookBody, { webhookUrl: 'https://hooks.acme.example/drm', regenerateSecret: false }),
      responses: {
        '200': jsonResponse(
          'the URL and the signing secret',
          object({ webhookUrl: nullable(str()), webhookSecret: str() }),
        ),
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/webhook/deliveries',
    operation: keyed('billing', WEBHOOK, {
      operationId: 'listDeliveries',
      summary: 'Webhook delivery history, newest first',
      parameters: pagingParams(100),
      responses: {
        '200': jsonResponse(
          'a page of deliveries',
          object({ deliveries: arrayOf(ref('Delivery')), page: int(), limit: int() }),
        ),
      },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/webhook/test',
    operation: keyed('billing', WEBHOOK, {
      operationId: 'testWebhook',
      summary: 'Send a signed test event to the webhook URL',
      description: '400 when no webhookUrl is set.',
      responses: {
        '200': jsonResponse(
          "the receiver's answer (responseCode 0: none came)",
          object({ success: bool(), responseCode: int() }),
        ),
      },
    }),
  },
];

export const VIEWER_ENDPOINTS: Endpoint[] = [...viewers, ...webhook];

import {
  capability,
  type Endpoint,
  jsonBody,
  jsonResponse,
  keyed,
  notFound,
  object,
  open,
  pagingParams,
  pathParam,
  ref,
  str,
  uuid,
} from './build.js';
import { SCHEMA_PARTS } from './schemas-core.js';

// Spec 4.3 (catalog) and 4.4 (streaming), with the catalog's open pictures and the player's key.

const CATALOG = 'Catalog';
const STREAM = 'Streaming';
const contentId = pathParam('contentId', 'the content item', uuid());
const PRIVATE =
  'Sent with Cache-Control: private, no-store, and Access-Control-Allow-Origin: ' +
  "* (players run on the organizations' own sites).";

function picture(file: string, type: string, what: string): Endpoint {
  return {
    method: 'get',
    path: `/api/v1/catalog/{contentId}/${file}`,
    operation: open(CATALOG, {
      operationId: file === 'thumbnail.jpg' ? 'contentThumbnail' : 'contentPreview',
      summary: `The item's ${what}`,
      description:
        'Open to anyone holding the content id (an <img> or <video> cannot send a key); public, cached for a day.',
      parameters: [contentId],
      responses: {
        '200': { description: what, content: { [type]: { schema: { type: 'string', contentMediaType: type } } } },
        '404': notFound,
      },
    }),
  };
}

const catalog: Endpoint[] = [
  {
    method: 'get',
    path: '/api/v1/catalog',
    operation: keyed('catalog', CATALOG, {
      operationId: 'listCatalog',
      summary: 'Content licensed to the organization',
      parameters: pagingParams(200),
      responses: {
        '200': jsonResponse(
          'a page of the catalog',
          object({
            content: { type: 'array', items: ref('ContentSummary') },
            page: { type: 'integer' },
            limit: { type: 'integer' },
          }),
        ),
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/catalog/{contentId}',
    operation: keyed('catalog', CATALOG, {
      operationId: 'getContent',
      summary: 'One licensed content item with its detail fields',
      parameters: [contentId],
      responses: { '200': jsonResponse('the item', ref('ContentDetail')), '404': notFound },
    }),
  },
  picture('thumbnail.jpg', 'image/jpeg', 'thumbnail (JPEG)'),
  picture('preview.mp4', 'video/mp4', 'preview: 10 s at 360p, unmarked (MP4)'),
];

const streamBody = object(
  {
    viewerToken: str(
      "a JWT signed with the organization's private key (claims: sub, exp; optional email, walletAddress, aud)",
      { maxLength: 8192 },
    ),
    walletAddress: { ...SCHEMA_PARTS.wallet, description: "the viewer's own wallet" },
    viewerId: str("Shape B: the organization's own id for the viewer, on its word", { minLength: 1, maxLength: 256 }),
  },
  ['viewerToken', 'walletAddress', 'viewerId'],
  "With a valid viewerToken the viewer is the token's subject; else viewerId " +
    'names one; with neither a random viewer is made.',
);

const endSession = (operationId: string, path: string, param: string, shape: string): Endpoint => ({
  method: 'delete',
  path,
  operation: keyed('stream', STREAM, {
    operationId,
    summary: `End a stream session (${shape})`,
    description: 'Segments and the key are no longer served for it.',
    parameters: [pathParam(param, 'the stream session', uuid())],
    responses: { '200': jsonResponse('ended', ref('Success')), '404': notFound },
  }),
});

const stream: Endpoint[] = [
  {
    method: 'post',
    path: '/api/v1/stream/{id}',
    operation: keyed('stream', STREAM, {
      operationId: 'createSession',
      summary: 'Start a stream session for a viewer (spec: POST /api/v1/stream/{contentId})',
      description:
        'Needs a license for the content (403 LICENSE_REQUIRED); a blocked viewer is ' +
        '403 VIEWER_BLOCKED; over the monthly stream limit 429. A new viewer gets a ' +
        'permanent binaryId and a wallet (event viewer.created); every session emits ' +
        'viewer.stream. The path shares its template with the Shape B DELETE of a ' +
        'session, so it is named {id}.',
      parameters: [pathParam('id', 'the content id', uuid())],
      requestBody: jsonBody(streamBody, { viewerId: 'viewer-42' }, false),
      responses: { '201': jsonResponse('the session', ref('CreatedSession')), '404': notFound },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/stream/{contentId}/playlist',
    operation: capability(STREAM, {
      operationId: 'getPlaylist',
      summary: "The session's HLS playlist",
      description:
        `AES-128 (#EXT-X-KEY with the key URI below), #EXT-X-TARGETDURATION:10; segment ` +
        `URIs are /api/v1/stream/{contentId}/segment/{n}.ts?session=…, served per viewer ` +
        `from variant A or B. ${PRIVATE}`,
      parameters: [contentId],
      responses: {
        '200': {
          description: 'the playlist',
          content: { 'application/vnd.apple.mpegurl': { schema: { type: 'string' } } },
        },
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/stream/{contentId}/key',
    operation: capability(STREAM, {
      operationId: 'getContentKey',
      summary: "The content's AES-128 key",
      description: `The 16 key bytes, for an active, unexpired session of a viewer who is not blocked. ${PRIVATE}`,
      parameters: [contentId],
      responses: {
        '200': {
          description: '16 bytes',
          content: {
            'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
          },
        },
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/stream/{contentId}/segment/{seg}',
    operation: capability(STREAM, {
      operationId: 'getSegment',
      summary: 'One encrypted MPEG-TS segment',
      description:
        `Segment s comes from variant A when bit (s mod 40) of the viewer's binaryId is ` +
        `0, from B when it is 1. ${PRIVATE}`,
      parameters: [
        contentId,
        pathParam('seg', 'the segment number, optionally with .ts', { type: 'string', pattern: '^\\d{1,9}(\\.ts)?$' }),
      ],
      responses: {
        '200': {
          description: 'the segment',
          content: { 'video/mp2t': { schema: { type: 'string', contentMediaType: 'video/mp2t' } } },
        },
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/stream/sessions/{sessionId}',
    operation: keyed('stream', STREAM, {
      operationId: 'getSession',
      summary: "One of the organization's stream sessions",
      parameters: [pathParam('sessionId', 'the stream session', uuid())],
      responses: { '200': jsonResponse('the session', ref('Session')), '404': notFound },
    }),
  },
  endSession('endSession', '/api/v1/stream/sessions/{sessionId}', 'sessionId', 'Shape A path'),
  endSession('endSessionShapeB', '/api/v1/stream/{id}', 'id', 'Shape B path'),
];

export const STREAM_ENDPOINTS: Endpoint[] = [...catalog, ...stream];

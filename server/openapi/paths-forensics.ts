import {
  admin,
  arrayOf,
  type Endpoint,
  int,
  jsonResponse,
  keyed,
  notFound,
  object,
  open,
  pagingParams,
  pathParam,
  queryParam,
  ref,
  str,
  uuid,
} from './build.js';
import { SCHEMA_PARTS } from './schemas-core.js';

// Spec 4.8 (scope forensics), and the platform operator's view of every organization's cases.

const FORENSICS = 'Forensics';
const caseId = pathParam('caseId', 'the forensic case', uuid());
const caseList = (item: string) => object({ cases: arrayOf(ref(item)), total: int(), page: int(), limit: int() });

const upload = object({
  file: str('the leaked file, video or audio', { contentMediaType: 'application/octet-stream' }),
  contentId: uuid('the original content'),
  contentType: SCHEMA_PARTS.contentType,
});

export const FORENSIC_ENDPOINTS: Endpoint[] = [
  {
    method: 'post',
    path: '/api/v1/forensics/analyze',
    operation: keyed('forensics', FORENSICS, {
      operationId: 'analyzeLeak',
      summary: 'Analyse a leaked file and open a forensic case',
      description:
        "The upload streams to disk under the server's upload limit (413 beyond it). " +
        'Short leaks are decided within the request; with async=true the answer is ' +
        '202 at once and the case is analysed by the queue (poll GET ' +
        '/api/v1/forensics/cases/{caseId}). The caller sees identities of its own ' +
        "organization's viewers only.",
      parameters: [
        queryParam('async', 'answer 202 at once and analyse in the background', {
          type: 'string',
          enum: ['true', 'false'],
          default: 'false',
        }),
      ],
      requestBody: { required: true, content: { 'multipart/form-data': { schema: upload } } },
      responses: {
        '200': jsonResponse('the case as decided', ref('AnalysisResult')),
        '202': jsonResponse('the case, queued (status processing)', ref('AnalysisResult')),
        '404': notFound,
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/forensics/cases',
    operation: keyed('forensics', FORENSICS, {
      operationId: 'listCases',
      summary: "The organization's forensic cases, newest first",
      parameters: pagingParams(100),
      responses: { '200': jsonResponse('a page of cases', caseList('Case')) },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/forensics/cases/{caseId}',
    operation: keyed('forensics', FORENSICS, {
      operationId: 'getCase',
      summary: 'One case with its evidence chain and the numbers behind it',
      description:
        'Shape A: the case fields flat with evidenceChain; Shape B: {case, ' +
        "evidenceChain}. This document follows the server's --api-shape.",
      parameters: [caseId],
      responses: { '200': jsonResponse('the case', ref('CaseDetail')), '404': notFound },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/forensics/cases/{caseId}/report',
    operation: keyed('forensics', FORENSICS, {
      operationId: 'getCaseReport',
      summary: 'The case as one self-contained HTML evidence report',
      description:
        "For an investigator to hand to a lawyer: the evidence chain, the leak's " +
        "SHA-256, size and duration, each segment's z against the threshold, the " +
        'false-positive probability explained, frame thumbnails, the method. No ' +
        'external assets; sent as an attachment (case-{caseId}.html) under a ' +
        'Content-Security-Policy that loads and runs nothing.',
      parameters: [caseId],
      responses: {
        '200': {
          description: 'the report',
          headers: {
            'Content-Disposition': {
              description: 'attachment; filename="case-{caseId}.html"',
              schema: { type: 'string' },
            },
          },
          content: { 'text/html; charset=utf-8': { schema: { type: 'string' } } },
        },
        '404': notFound,
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/forensics/report-key',
    operation: open(FORENSICS, {
      operationId: 'getReportKey',
      summary: 'The public key that signs evidence reports, and its fingerprint',
      description:
        'Open, so that whoever is handed a report can verify it: `drm cases verify case.html ' +
        '--key-file key.json` with this answer saved as key.json, or `--key` with the key or the ' +
        'fingerprint. A report signed by any other key is not intact, whatever key it names. The ' +
        'key is derived from the server secret: every server of a deployment answers the same. ' +
        'Answered from memory, cacheable for an hour.',
      responses: { '200': jsonResponse('the key', ref('ReportKey')) },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/admin/forensics/cases',
    operation: admin('Admin', {
      operationId: 'adminListCases',
      summary: "Every organization's forensic cases, with the whole evidence chain",
      parameters: pagingParams(100),
      responses: { '200': jsonResponse('a page of cases', caseList('OperatorCase')) },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/admin/forensics/cases/{caseId}',
    operation: admin('Admin', {
      operationId: 'adminGetCase',
      summary: 'Any case, including local `drm analyze` cases and matches outside the asking organization',
      parameters: [caseId],
      responses: { '200': jsonResponse('the case', ref('OperatorCaseDetail')), '404': notFound },
    }),
  },
];

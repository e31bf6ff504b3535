import net from 'node:net';
import { GetObjectCommand, PutBucketCorsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageConfig } from '../../src/storage/config.js';
import { s3Client } from '../../src/storage/s3-store.js';
import { PLAYER_RULE_ID, parseOrigins, setUpStore } from '../../src/storage/setup.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

// `drm storage setup` readies a bucket for players in browsers. Run against a
// real s3rver, which keeps the CORS configuration PutBucketCors sends and answers cross-origin
// GETs by it (its cors middleware): no rule, no Access-Control-Allow-Origin.

let s3: TestS3;
const storage = (bucket: string, endpoint = s3.endpoint): StorageConfig => ({
  store: { kind: 's3', bucket, prefix: 'content' },
  s3: { endpoint },
  segmentDelivery: 'redirect',
});
const expectDrmError = (work: Promise<unknown>, code: string, message: RegExp) =>
  expect(work).rejects.toMatchObject({ name: 'DrmError', code, message: expect.stringMatching(message) });

/** A client whose named calls fail as the SDK fails a store's refusal; the others answer nothing. */
const refusing = (byCommand: Record<string, [string, number]>) =>
  ({
    send: async (command: object) => {
      const failure = byCommand[command.constructor.name];
      if (!failure) return {};
      throw Object.assign(new Error(`refused: ${failure[0]}`), {
        name: failure[0],
        $metadata: { httpStatusCode: failure[1] },
      });
    },
    config: { region: async () => 'us-east-1' },
  }) as unknown as S3Client;

beforeAll(async () => {
  s3 = await startS3('drm-existing');
});
afterAll(async () => s3?.close());

describe('drm storage setup (core)', () => {
  it('creates a missing bucket and sets the players rule, read back from the store', async () => {
    const done = await setUpStore(storage('drm-fresh'));
    expect(done).toMatchObject({
      kind: 's3',
      store: 's3://drm-fresh/content',
      bucket: 'drm-fresh',
      bucketCreated: true,
      otherRules: 0,
    });
    expect(done.kind === 's3' && done.cors).toEqual([
      {
        id: PLAYER_RULE_ID,
        origins: ['*'],
        methods: ['GET', 'HEAD'],
        headers: ['Range'],
        expose: ['Content-Length', 'Content-Range', 'ETag'],
        maxAgeSeconds: 3600,
      },
    ]);
    expect(done).not.toHaveProperty('note');
  });

  it("replaces its own rule on a rerun and keeps the bucket's other rules", async () => {
    const client = s3Client({ endpoint: s3.endpoint });
    await client.send(
      new PutBucketCorsCommand({
        Bucket: 'drm-existing',
        CORSConfiguration: {
          CORSRules: [{ ID: 'uploads', AllowedOrigins: ['https://admin.example'], AllowedMethods: ['PUT'] }],
        },
      }),
    );
    await setUpStore(storage('drm-existing'));
    const done = await setUpStore(storage('drm-existing'), {
      origins: ['https://films.example/', 'https://*.films.example'],
    });
    expect(done).toMatchObject({ bucketCreated: false, otherRules: 1, note: expect.stringMatching(/Origin: null/) });
    expect(done.kind === 's3' && done.cors.map((r) => [r.id, r.origins])).toEqual([
      ['uploads', ['https://admin.example']],
      [PLAYER_RULE_ID, ['https://films.example', 'https://*.films.example']],
    ]);
  });

  it('makes the store answer a cross-origin GET with CORS headers only once set up', async () => {
    const client = s3Client({ endpoint: s3.endpoint });
    await client.send(new PutObjectCommand({ Bucket: 'drm-existing', Key: 'content/x', Body: 'segment' }));
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: 'drm-existing', Key: 'content/x' }), {
      expiresIn: 50,
    });
    const get = (origin: string) => fetch(url, { headers: { origin } });
    // drm-existing carries the rule for two named origins (the test before): another is not let in.
    expect((await get('https://elsewhere.example')).headers.get('access-control-allow-origin')).toBeNull();
    expect((await get('https://films.example')).headers.get('access-control-allow-origin')).toBe(
      'https://films.example',
    );
    await setUpStore(storage('drm-existing'));
    const open = await get('null');
    expect(open.headers.get('access-control-allow-origin')).toBe('*');
    expect(open.headers.get('access-control-expose-headers')).toBe('Content-Length, Content-Range, ETag');
  });

  it('says a disk store has nothing to set up, without failing', async () => {
    const done = await setUpStore({
      store: { kind: 'file', root: '/srv/drm/content' },
      s3: {},
      segmentDelivery: 'proxy',
    });
    expect(done).toEqual({
      kind: 'file',
      store: 'file:/srv/drm/content',
      changed: false,
      message: expect.stringMatching(/nothing to set up/),
    });
  });

  it('checks origins: * or scheme://host[:port], at most one wildcard', () => {
    expect(parseOrigins(undefined)).toEqual(['*']);
    expect(parseOrigins(['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'])).toEqual(['http://127.0.0.1:8080']);
    for (const bad of ['films.example', 'https://films.example/player', 'ftp://films.example', 'https://*.*.example']) {
      expect(() => parseOrigins([bad]), bad).toThrow(/--origin must be/);
    }
  });
});

describe('drm storage setup (refusals, each with its fix)', () => {
  it('names an endpoint that does not answer', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    await expectDrmError(
      setUpStore(storage('drm-x', `http://127.0.0.1:${closed}`)),
      'INTERNAL_ERROR',
      /cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\).*--s3-endpoint/,
    );
  });

  // s3rver checks an access key's id but never verifies a V4 signature, so a wrong secret passes
  // there; SignatureDoesNotMatch, as a real store answers it, is among the refusals below.
  it('says the credentials were refused', async () => {
    const wrong = new S3Client({
      endpoint: s3.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: 'NOBODY', secretAccessKey: 'nothing' },
    });
    await expectDrmError(
      setUpStore(storage('drm-existing'), {}, wrong),
      'INTERNAL_ERROR',
      /refused the credentials \(InvalidAccessKeyId\).*AWS_ACCESS_KEY_ID/,
    );
  });

  it.each([
    [
      'a bucket name taken elsewhere',
      { GetBucketCorsCommand: ['NoSuchBucket', 404], CreateBucketCommand: ['BucketAlreadyExists', 409] },
      'CONFLICT',
      /creating the bucket: the bucket name drm-x is taken by another account/,
    ],
    [
      'a bucket of another account',
      { GetBucketCorsCommand: ['AccessDenied', 403] },
      'INTERNAL_ERROR',
      /access denied to bucket drm-x: it belongs to another account/,
    ],
    [
      'a store without bucket CORS',
      { PutBucketCorsCommand: ['NotImplemented', 501] },
      'INTERNAL_ERROR',
      /does not implement bucket CORS.*--segment-delivery proxy/,
    ],
    [
      'a wrong secret key',
      { GetBucketCorsCommand: ['SignatureDoesNotMatch', 403] },
      'INTERNAL_ERROR',
      /refused the credentials \(SignatureDoesNotMatch\)/,
    ],
    [
      'a store that keeps no CORS it was sent',
      {},
      'INTERNAL_ERROR',
      /accepted the CORS configuration but does not return it/,
    ],
  ] as const)('explains %s', async (_what, failures, code, message) => {
    await expectDrmError(
      setUpStore(storage('drm-x'), {}, refusing(failures as Record<string, [string, number]>)),
      code,
      message,
    );
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { badRequest } from '../../errors.js';
import type { MediaInfo } from '../../media/probe.js';
import { segmentSecondsOption } from '../../watermark/segment-rule.js';

// What an ingest request must be before any work starts; `drm ingest --queue` checks the same
// on the caller's side, so a bad request is refused before its file is sent to the spool.

export type ContentType = 'video' | 'music';

/** What `drm ingest` (or a queued job) asks for. */
export interface IngestRequest {
  input: string;
  title: string;
  type: ContentType;
  watermark: boolean;
  description?: string;
  /** x264 quality of the segments (default 18) */
  crf?: number;
  preset?: string;
  /** ingest for this organization: licensed to it, its balance pays the watermark fee first */
  organizationId?: string;
  /** how long each HLS segment is, in seconds: one of SEGMENT_LENGTHS (default 10, the spec's target duration) */
  segmentSeconds?: number;
  /** the new item's id (a queued job's worker records it first); a fresh one by default */
  contentId?: string;
}

const MAX_TITLE = 200;
const MAX_DESCRIPTION = 5000;

/** The request itself: the file is there, and the title, description, type and quality are in bounds. */
export function checkRequest(r: IngestRequest): void {
  if (!fs.existsSync(r.input)) throw badRequest(`${r.input} does not exist`);
  if (!fs.statSync(r.input).isFile()) throw badRequest(`${r.input} is not a file`);
  if (!r.title.trim()) throw badRequest('--title must not be empty');
  if (r.title.length > MAX_TITLE) throw badRequest(`--title is longer than ${MAX_TITLE} characters`);
  if ((r.description?.length ?? 0) > MAX_DESCRIPTION)
    throw badRequest(`--description is longer than ${MAX_DESCRIPTION} characters`);
  if (r.type !== 'video' && r.type !== 'music')
    throw badRequest(`--type must be video or music, got ${JSON.stringify(r.type)}`);
  if (r.crf !== undefined && !(Number.isInteger(r.crf) && r.crf >= 0 && r.crf <= 51))
    throw badRequest('--crf must be a whole number from 0 to 51');
  segmentSecondsOption(r.segmentSeconds);
}

/** What the probe found fits the request: a video stream for video, audio for music, a duration. */
export function checkMedia(r: IngestRequest, info: MediaInfo): void {
  const name = path.basename(r.input);
  if (r.type === 'video' && !info.video)
    throw badRequest(`${name} has no video stream: ingest it with --type music, or pick a video file`);
  if (r.type === 'music' && !info.audio) throw badRequest(`${name} has no audio stream to package as music`);
  if (!(info.duration > 0)) throw badRequest(`${name} has no duration ffmpeg can read`);
}

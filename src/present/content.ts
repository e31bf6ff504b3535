import type { CatalogRow, ContentRow } from '../db/repos/index.js';

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** Catalog summary: the listing fields of section 4.3 (resolution and previewUrl for videos only). */
export function contentSummary(c: CatalogRow, base: string) {
  const video = c.type === 'video';
  return {
    id: c.id,
    title: c.title,
    type: c.type,
    duration: seconds(c.duration),
    ...(video && { resolution: c.resolution }),
    thumbnail: `${base}/api/v1/catalog/${c.id}/thumbnail.jpg`,
    ...(video && { previewUrl: `${base}/api/v1/catalog/${c.id}/preview.mp4` }),
  };
}

/** Catalog detail: both shapes' fields (description and isWatermarked from A, hlsPlaylist from B). */
export function contentDetail(c: ContentRow, base: string) {
  return {
    ...contentSummary(c, base),
    description: c.description ?? '',
    isWatermarked: c.isWatermarked,
    segmentCount: c.segmentCount,
    // A playlist is served per stream session: POST /api/v1/stream/{id} returns the URL with ?session=.
    hlsPlaylist: `${base}/api/v1/stream/${c.id}/playlist`,
  };
}

/** The operator's view of an item: every stored field but the key, with what points at it when known. */
export function contentAdminBody(
  c: ContentRow,
  refs?: { liveSessions: number; sessions: number; licenses: number; cases: number },
) {
  return {
    id: c.id,
    title: c.title,
    type: c.type,
    duration: seconds(c.duration),
    resolution: c.resolution,
    isWatermarked: c.isWatermarked,
    segmentCount: c.segmentCount,
    segmentSeconds: c.segmentSeconds,
    // which bit of an id each segment carries: the keyed rule of the item, or the fixed one of older content
    segmentRule: c.isWatermarked ? c.segmentRule : null,
    status: c.status,
    storagePath: c.storagePath,
    createdAt: new Date(c.createdAt).toISOString(),
    ...(refs && { references: refs }),
  };
}

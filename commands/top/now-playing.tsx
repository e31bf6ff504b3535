import { Text } from 'ink';
import type { PlayingSession } from '../../src/domain/operations/now-playing.js';
import { fitWidths, formatBytes, padOrCut } from './format.js';

const HEAD = ['title', 'viewer', 'organization', 'bytes / s'];

/**
 * The newest sessions playing, one line each: the content's title, the viewer as its
 * organization names it, the organization, and the bytes per second sent to it. The columns take
 * the width their longest entry needs, and the longest give way first on a narrow terminal.
 */
export function NowPlayingList({
  playing,
  width,
  windowSeconds,
}: {
  playing: PlayingSession[];
  width: number;
  windowSeconds: number;
}) {
  if (playing.length === 0)
    return <Text dimColor>{`no session playing (none was sent a segment in the last ${windowSeconds} s)`}</Text>;
  const rows = playing.map((p) => [
    p.title,
    p.externalViewerId,
    p.organizationName,
    `${formatBytes(p.bytesPerSecond)}/s`,
  ]);
  const natural = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  // the rate is never cut: the three names share what is left, one space between columns
  const rate = natural[3] as number;
  const names = fitWidths(natural.slice(0, 3), width - rate - 3);
  const line = (cells: string[]) =>
    `${cells
      .slice(0, 3)
      .map((c, i) => padOrCut(c, names[i] as number))
      .join(' ')} ${(cells[3] as string).padStart(rate)}`;
  return (
    <>
      <Text dimColor wrap="truncate-end">
        {line(HEAD)}
      </Text>
      {rows.map((r, i) => (
        <Text key={playing[i]?.sessionId} wrap="truncate-end">
          {line(r)}
        </Text>
      ))}
    </>
  );
}

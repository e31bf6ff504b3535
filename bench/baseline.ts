import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Another commit of this repository, checked out as a git worktree in `dir` that shares this
 * checkout's node_modules, so that a benchmark can run the two side by side on one machine (runs
 * alternated, so that load from elsewhere weighs on both alike). `remove` takes the worktree away.
 */
export function baselineTree(root: string, rev: string, dir: string): { dir: string; remove(): void } {
  execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', dir, rev], { stdio: 'ignore' });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return {
    dir,
    remove: () => {
      execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', dir], { stdio: 'ignore' });
    },
  };
}

import fs from 'node:fs';
import type { Command } from 'commander';
import { badRequest } from '../src/errors.js';
import { commandPath } from './help.js';

/** What can follow each command path: its subcommands, or its flags. */
function completionTable(program: Command): Map<string, string[]> {
  const table = new Map<string, string[]>();
  const visit = (cmd: Command) => {
    const words = [
      ...cmd.commands.map((c) => c.name()),
      ...cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f))),
      '--help',
    ];
    table.set(commandPath(cmd), words);
    for (const sub of cmd.commands) visit(sub);
  };
  visit(program);
  return table;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A bash completion function for drm, made from the commands as they are defined (so it never
 * falls behind them): command words complete to subcommands, then to the command's flags;
 * anything else (a file to ingest, a leak) falls back to file names.
 */
export function bashCompletion(program: Command): string {
  const table = completionTable(program);
  const cases = [...table].map(([path, words]) => `    ${quote(path)}) words=${quote(words.join(' '))} ;;`);
  const template = fs.readFileSync(new URL('./completion.bash', import.meta.url), 'utf8');
  return template
    .replace('@PATHS@', [...table.keys()].filter(Boolean).map(quote).join('|'))
    .replace('@CASES@', cases.join('\n'));
}

/** zsh runs the bash function through its bashcompinit layer. */
export function zshCompletion(program: Command): string {
  const bash = bashCompletion(program).split('\n').slice(1).join('\n');
  return [
    '#compdef drm',
    '# drm completion for zsh: eval "$(drm completion zsh)" in ~/.zshrc',
    'autoload -U +X bashcompinit && bashcompinit',
    bash,
  ].join('\n');
}

export function completionScript(program: Command, shell: string): string {
  if (shell === 'bash') return bashCompletion(program);
  if (shell === 'zsh') return zshCompletion(program);
  throw badRequest(`completion is for bash or zsh, got ${JSON.stringify(shell)}`);
}

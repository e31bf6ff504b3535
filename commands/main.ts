import { type Command, CommanderError } from 'commander';
import { DrmCommand } from './drm-command.js';
import { defineContent } from './content-definitions.js';
import { defineAdmin, defineDataCommands, defineWatermark } from './definitions.js';
import { defineServe } from './serve-definitions.js';
import { defineOperations } from './operations-definitions.js';
import { defineStorage } from './storage-definitions.js';
import { defineWorkers } from './worker-definitions.js';
import { flagNamesOf, finishCommands } from './help.js';
import { ANALYZE_USAGE_EXIT, FLAG_NAMES, type Runner, TYPED } from './options.js';
import { packageVersion } from '../src/version.js';
import { createOutput, reportError } from './output.js';

/**
 * commander's "error: …" (and a "(Did you mean …?)" line) as the CLI's single `drm: …` line, pointing
 * at the command's own help.
 */
function usageLine(str: string, help: string): string {
  const text = str
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  return `drm: ${text} (see ${help})\n`;
}

/** Parses argv and runs one command; the real work is imported only for the command that runs. */
export async function main(argv: string[]): Promise<number> {
  const program = new DrmCommand('drm')
    .description('Forensic DRM streaming: AES-128 HLS with per-viewer watermarks, leak tracing, billing')
    .version(packageVersion(), '-V, --version', 'print the version of drm')
    .exitOverride();
  let exitCode = 0;
  const run: Runner =
    (load) =>
    async (...args: unknown[]) => {
      const fn = await load();
      // commander passes the arguments, then the options, then the command itself.
      const command = args[args.length - 1] as Command;
      const opts = args[args.length - 2] as Record<symbol, unknown>;
      opts[FLAG_NAMES] = flagNamesOf(command);
      opts[TYPED] = new Set(
        command.options.map((o) => o.attributeName()).filter((key) => command.getOptionValueSource(key) === 'cli'),
      );
      exitCode = await (fn as (...a: unknown[]) => Promise<number>)(...args);
    };

  defineServe(program, run);
  defineDataCommands(program, run);
  defineAdmin(program, run);
  defineWatermark(program, run);
  defineContent(program, run);
  defineOperations(program, run);
  defineStorage(program, run);
  defineWorkers(program, run);
  // Usage errors as one line on stderr, like every other CLI error; examples and required marks in --help.
  finishCommands(program, usageLine);

  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; help shown because a subcommand is missing exits 1; usage errors 2.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version')
        return err.exitCode;
      return argv[2] === 'analyze' ? ANALYZE_USAGE_EXIT : 2;
    }
    return reportError(createOutput(argv.includes('--json')), err);
  }
}

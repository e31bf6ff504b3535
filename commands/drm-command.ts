import { Command, type Option } from 'commander';

/** The two methods of commander's Command that it does not declare in its types. */
interface Internals {
  unknownOption(flag: string): never;
  missingMandatoryOptionValue(option: Option): never;
}

/**
 * commander checks required options before it looks for unknown ones, so `--titel X` was
 * reported as a missing `--title`. A command that misses a required option first reports an
 * option it does not know, with commander's "Did you mean" suggestion, since that is the
 * mistake the user made.
 */
export class DrmCommand extends Command {
  constructor(name?: string) {
    super(name);
    const self = this as unknown as Internals;
    const missing = self.missingMandatoryOptionValue.bind(this);
    self.missingMandatoryOptionValue = (option) => {
      const known = new Set(this.options.flatMap((o) => [o.long, o.short]).filter(Boolean));
      const unknown = this.args.find((a) => a.startsWith('-') && a !== '-' && !known.has(a.split('=')[0] as string));
      if (unknown) self.unknownOption(unknown);
      return missing(option);
    };
  }

  override createCommand(name?: string): Command {
    return new DrmCommand(name);
  }
}

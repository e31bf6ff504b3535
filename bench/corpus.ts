import fs from 'node:fs';

/**
 * The benchmark's input clip, or a one-line hint and exit 2 when it is missing: the defaults name
 * the corpus in /tmp/corpus, which `bench/corpus/make-corpus.sh /tmp/corpus` makes.
 */
export function corpusFile(file: string): string {
  if (fs.existsSync(file)) return file;
  process.stderr.write(
    `bench: ${file} does not exist: make the corpus with bench/corpus/make-corpus.sh /tmp/corpus, or pass --input FILE\n`,
  );
  process.exit(2);
}

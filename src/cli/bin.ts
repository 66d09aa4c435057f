#!/usr/bin/env node
import { main } from './main.js';

// A reader that stops early (`toolcell --help | head -1`) closes the pipe: the
// rest of the output is dropped and the command finishes as it would have
// (its sandbox cleaned up), instead of dying on EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`toolcell: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

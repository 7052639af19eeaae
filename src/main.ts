#!/usr/bin/env bun
// Entry point of the `posthorn` executable.
import { main } from './cli/index';
import { profileThisThreadIfAsked } from './bench-profile';

profileThisThreadIfAsked('main');

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`posthorn: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);

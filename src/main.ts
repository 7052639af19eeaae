#!/usr/bin/env bun
// Entry point of the `posthorn` executable.
import { main } from './cli/index';

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`posthorn: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);

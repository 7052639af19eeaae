// The libraries Posthorn reaches into (docs/ARCHITECTURE.md §5, "Where Posthorn reaches into a
// library") are pinned to the exact version their canaries in this folder were checked against.
// A bump fails here first, on purpose: run `npm test -- test/dependencies`, re-read the reaches the
// table lists for that library in its new version, then record the version below.
import { describe, test, expect } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');

/** Library → the version the reaches into it were last checked against, and where they are. */
const CHECKED: Record<string, { version: string; reaches: string }> = {
  'smtp-server': { version: '3.21.6', reaches: 'src/smtp/adapt.ts (test/dependencies/smtp-server.test.ts)' },
  nodemailer: { version: '10.6.0', reaches: 'src/delivery/smtp-client.ts `_socket`, `upgrading` (test/dependencies/nodemailer.test.ts)' },
  mailauth: { version: '7.1.0', reaches: 'src/mail/dkim.ts, src/mail/mta-sts.ts, src/mail/mailauth-parts.d.ts (test/dependencies/mailauth.test.ts)' },
  mailparser: { version: '3.9.31', reaches: 'src/mail/headers.ts `libmime` (test/dependencies/mailparser.test.ts)' },
  mustache: { version: '4.2.0', reaches: 'src/templates/render.ts Writer (test/dependencies/mustache.test.ts)' },
};

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { version: string; dependencies: Record<string, string> };

describe('libraries Posthorn reaches into', () => {
  const pkg = json(join(ROOT, 'package.json'));
  for (const [name, { version, reaches }] of Object.entries(CHECKED)) {
    test(`${name}: pinned, installed and checked at one exact version`, () => {
      const pinned = pkg.dependencies[name];
      expect(pinned, `${name} must be pinned to an exact version in package.json: ${reaches} reach into its internals`).toMatch(/^\d+\.\d+\.\d+$/);
      const installed = json(join(ROOT, 'node_modules', name, 'package.json')).version;
      expect(installed, `node_modules has ${name} ${installed}, package.json pins ${pinned}: run npm ci`).toBe(pinned);
      expect(
        pinned,
        `${name} moved from ${version} to ${pinned}: ${reaches} — run npm test -- test/dependencies, re-read those reaches in the new version, then record ${pinned} in test/dependencies/pinned.test.ts`,
      ).toBe(version);
    });
  }
});

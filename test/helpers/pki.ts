// A certificate authority for tests (selfsigned, on @peculiar/x509), so TLS peers can be verified
// the way a real MTA-STS sender verifies them: certificates chaining to a trusted root and naming
// the host. Its root is handed to Posthorn as `delivery.mta_sts.ca_file`.
//
//   const ca = await testCa();                                  // ca.cert, ca.file (PEM on disk)
//   const mx = await ca.issue(['mx.example.test']);             // {key, cert} for a server
import { generate } from 'selfsigned';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  /** The root certificate (PEM). */
  cert: string;
  /** A file holding it, for `delivery.mta_sts.ca_file`. */
  file: string;
  /** A server certificate for these DNS names, signed by the root. */
  issue(names: string[]): Promise<{ key: string; cert: string }>;
}

export async function testCa(): Promise<TestCa> {
  const root = await generate([{ name: 'commonName', value: 'Posthorn Test CA' }], {
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const file = join(mkdtempSync(join(tmpdir(), 'posthorn-ca-')), 'ca.pem');
  writeFileSync(file, root.cert);
  return {
    cert: root.cert,
    file,
    async issue(names) {
      const leaf = await generate([{ name: 'commonName', value: names[0]! }], {
        algorithm: 'sha256',
        ca: { key: root.private, cert: root.cert },
        extensions: [
          { name: 'basicConstraints', cA: false },
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
          { name: 'extKeyUsage', serverAuth: true },
          { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2 as const, value })) },
        ],
      });
      return { key: leaf.private, cert: leaf.cert };
    },
  };
}

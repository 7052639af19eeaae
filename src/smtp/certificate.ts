// The SMTP listeners' TLS certificate (`smtp.tls_cert` / `smtp.tls_key`, config.example.toml): the configured
// PEM files, or a self-signed certificate for `smtp.hostname` generated into data_dir on first
// start and reused afterwards (renewed once expired). Sending MTAs use opportunistic STARTTLS
// without verifying the certificate (RFC 3207 §4.1), so a self-signed one still encrypts inbound
// mail; submission clients must be told to accept it, or be given a real certificate.
import { existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { Config } from '../config';
import { log } from '../log';
import { smtpCertificateFiles } from '../net/certificate-files';

export interface Certificate {
  key: string;
  cert: string;
  /** Where it came from: the configured files, or the generated pair in data_dir. */
  source: 'configured' | 'self-signed';
}

export { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../net/certificate-files';
const VALIDITY_DAYS = 3650;

export async function smtpCertificate(config: Pick<Config, 'smtp' | 'data_dir'>): Promise<Certificate> {
  const files = smtpCertificateFiles(config);
  if (files.source === 'configured') return { key: readFileSync(files.key, 'utf8'), cert: readFileSync(files.cert, 'utf8'), source: 'configured' };

  const keyPath = files.key;
  const certPath = files.cert;
  if (existsSync(keyPath) && existsSync(certPath)) {
    const pair = { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8') };
    if (Date.parse(new X509Certificate(pair.cert).validTo) > Date.now()) return { ...pair, source: 'self-signed' };
  }
  const hostname = config.smtp.hostname;
  const now = new Date();
  // Loaded only to make a certificate: selfsigned and its ASN.1 and X.509 libraries hold about
  // 15 MB of heap, which every later start (the pair above is reused for ten years) never needs.
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: hostname }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: now,
    notAfterDate: new Date(now.getTime() + VALIDITY_DAYS * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: hostname }] },
    ],
  });
  // Written whole then renamed: a crash never leaves half a key behind. The key is private (0600).
  writeFileSync(`${keyPath}.tmp`, pems.private, { mode: 0o600 });
  writeFileSync(`${certPath}.tmp`, pems.cert, { mode: 0o644 });
  renameSync(`${keyPath}.tmp`, keyPath);
  renameSync(`${certPath}.tmp`, certPath);
  log.info('smtp.certificate_generated', { hostname, cert: certPath, key: keyPath, valid_days: VALIDITY_DAYS });
  return { key: pems.private, cert: pems.cert, source: 'self-signed' };
}

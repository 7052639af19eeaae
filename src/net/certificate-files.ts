// Where the SMTP listeners' certificate lives: the configured PEM files (`smtp.tls_cert` /
// `smtp.tls_key`), or the self-signed pair generated into data_dir (smtp/certificate.ts makes it;
// the doctor, health/certificate.ts, reads it without making one).
import { join } from 'node:path';
import type { Config } from '../config';

export const SELF_SIGNED_KEY = 'smtp-tls-key.pem';
export const SELF_SIGNED_CERT = 'smtp-tls-cert.pem';

export function smtpCertificateFiles(config: Pick<Config, 'smtp' | 'data_dir'>): { cert: string; key: string; source: 'configured' | 'self-signed' } {
  const { tls_cert, tls_key } = config.smtp;
  if (tls_cert && tls_key) return { cert: tls_cert, key: tls_key, source: 'configured' };
  return { cert: join(config.data_dir, SELF_SIGNED_CERT), key: join(config.data_dir, SELF_SIGNED_KEY), source: 'self-signed' };
}

// The ACME certificate's names and renewal times (docs/mail.md §4, "Certificates by ACME"): table tests of the small
// decisions, and the configuration that refuses ACME without the CA's terms agreed.
import { describe, expect, test } from 'bun:test';
import { certifiable, certificateNames } from '../../src/acme/names';
import { FIRST_BACKOFF, MAX_BACKOFF, renewalDue, retryAfter } from '../../src/acme/schedule';
import { loadConfig } from '../../src/config';

const DAY = 86_400_000;

describe('names', () => {
  test.each([
    ['mail.example.com', true],
    ['MX.Example.COM.', true],
    ['localhost', false],
    ['app.localhost', false],
    ['mailhost', false],
    ['203.0.113.7', false],
    ['[2001:db8::1]', false],
  ])('%s is certifiable: %p', (host, ok) => {
    expect(certifiable(host)).toBe(ok);
  });

  test('the public_url host and smtp.hostname, once each, sorted; names a CA cannot certify left out', () => {
    expect(certificateNames({ public_url: 'https://posthorn.example.com', smtp: { hostname: 'mx.example.com' } as never })).toEqual([
      'mx.example.com',
      'posthorn.example.com',
    ]);
    expect(certificateNames({ public_url: 'https://mail.example.com:8443', smtp: { hostname: 'mail.example.com' } as never })).toEqual(['mail.example.com']);
    expect(certificateNames({ public_url: 'http://localhost:3000', smtp: { hostname: 'localhost' } as never })).toEqual([]);
  });
});

describe('renewal times', () => {
  test('due at two thirds of the life: day 60 of a 90-day certificate', () => {
    const from = Date.UTC(2026, 0, 1);
    expect(renewalDue(from, from + 90 * DAY)).toBe(from + 60 * DAY);
  });

  test.each([
    [1, FIRST_BACKOFF],
    [2, 2 * FIRST_BACKOFF],
    [3, 4 * FIRST_BACKOFF],
    [20, MAX_BACKOFF],
  ])('after failure %d, the next try waits %d ms', (failures, wait) => {
    expect(retryAfter(failures, 1_000)).toBe(1_000 + wait);
  });
});

describe('configuration', () => {
  const acme = (over: Record<string, unknown>) => () => loadConfig({ env: {}, overrides: { 'tls.acme.enabled': true, ...over } });

  test('ACME on without the terms agreed refuses to start, saying how to agree', () => {
    expect(acme({})).toThrow(/`tls.acme.terms_agreed` must be true when `tls.acme.enabled` is/);
  });

  test('with the terms agreed it loads, Let’s Encrypt by default', () => {
    const c = acme({ 'tls.acme.terms_agreed': true })();
    expect(c.tls.acme).toMatchObject({ enabled: true, directory: 'https://acme-v02.api.letsencrypt.org/directory', https_ports: [443] });
  });

  test('the environment names', () => {
    const c = loadConfig({
      env: {
        POSTHORN_TLS_ACME_ENABLED: 'true',
        POSTHORN_TLS_ACME_TERMS_AGREED: 'true',
        POSTHORN_TLS_ACME_DIRECTORY: 'https://acme-staging-v02.api.letsencrypt.org/directory',
        POSTHORN_TLS_ACME_EMAIL: 'ops@example.com',
        POSTHORN_TLS_ACME_HTTPS_PORTS: '8443',
      },
    });
    expect(c.tls.acme).toMatchObject({ directory: 'https://acme-staging-v02.api.letsencrypt.org/directory', email: 'ops@example.com', https_ports: [8443] });
  });

  test('bad values name their key', () => {
    expect(acme({ 'tls.acme.terms_agreed': true, 'tls.acme.email': 'not an address' })).toThrow(/tls\.acme\.email/);
    expect(acme({ 'tls.acme.terms_agreed': true, 'tls.acme.ca_file': '/nonexistent/ca.pem' })).toThrow(/tls\.acme\.ca_file/);
    expect(acme({ 'tls.acme.terms_agreed': true, 'tls.acme.directory': 'http://acme.example.com/dir' })).toThrow(/tls\.acme\.directory/);
    expect(acme({ 'tls.acme.terms_agreed': true, 'http.port': 8443, 'tls.acme.https_ports': [8443] })).toThrow(/tls\.acme\.https_ports/);
    expect(acme({ 'tls.acme.terms_agreed': true, 'http.tls_cert': import.meta.path, 'http.tls_key': import.meta.path })).toThrow(
      /`http\.tls_cert` must be unset/,
    );
  });
});

// What each documented blocklist zone's return codes mean and where its delisting form is
// (docs/deliverability.md §3, the zone table): a listing's incident names both. A zone not in the
// table (your own, a test's) is a listing by any 127/8 code, with no link.

export interface ZoneInfo {
  /** Where to look the address or domain up and ask for removal. */
  delisting: string;
  /** Return code → meaning; codes not named here read as `listed (<code>)`. */
  codes: Record<string, string>;
  /** URIBL and SURBL answer one address whose last octet is a bitmask of their lists. */
  bits?: Record<number, string>;
}

const SPAMHAUS_LOOKUP = 'https://check.spamhaus.org/';

export const ZONES: Record<string, ZoneInfo> = {
  'zen.spamhaus.org': {
    delisting: SPAMHAUS_LOOKUP,
    codes: {
      '127.0.0.2': 'SBL: a known spam source',
      '127.0.0.3': 'SBL CSS: snowshoe spam',
      '127.0.0.4': 'XBL: exploited or infected host',
      '127.0.0.9': 'SBL DROP: hijacked network',
      '127.0.0.10': 'PBL: end-user address that should not send directly (listed by its ISP)',
      '127.0.0.11': 'PBL: end-user address that should not send directly',
    },
  },
  'b.barracudacentral.org': { delisting: 'https://www.barracudacentral.org/rbl/removal-request', codes: { '127.0.0.2': 'Barracuda Reputation Block List' } },
  'bl.spamcop.net': { delisting: 'https://www.spamcop.net/bl.shtml', codes: { '127.0.0.2': 'SpamCop: reported by spam recipients' } },
  'psbl.surriel.com': { delisting: 'https://psbl.org/', codes: { '127.0.0.2': 'PSBL: sent to spam traps' } },
  'bl.mailspike.net': { delisting: 'https://mailspike.org/', codes: { '127.0.0.2': 'Mailspike: poor reputation' } },
  'dbl.spamhaus.org': {
    delisting: SPAMHAUS_LOOKUP,
    codes: {
      '127.0.1.2': 'DBL: spam domain',
      '127.0.1.4': 'DBL: phishing domain',
      '127.0.1.5': 'DBL: malware domain',
      '127.0.1.6': 'DBL: botnet command and control domain',
      '127.0.1.102': 'DBL: abused legitimate domain (spam)',
      '127.0.1.103': 'DBL: abused redirector or URL shortener',
      '127.0.1.104': 'DBL: abused legitimate domain (phishing)',
      '127.0.1.105': 'DBL: abused legitimate domain (malware)',
      '127.0.1.106': 'DBL: abused legitimate domain (botnet C&C)',
    },
  },
  'multi.uribl.com': { delisting: 'https://admin.uribl.com/', codes: {}, bits: { 2: 'URIBL black', 4: 'URIBL grey', 8: 'URIBL red' } },
  'multi.surbl.org': {
    delisting: 'https://www.surbl.org/surbl-analysis',
    codes: {},
    bits: { 8: 'SURBL phishing', 16: 'SURBL malware', 64: 'SURBL abuse', 128: 'SURBL cracked site' },
  },
};

/** The zone's documented entry (case-insensitive), if any. */
export function zoneInfo(zone: string): ZoneInfo | undefined {
  return ZONES[zone.toLowerCase()];
}

/** The meaning of a listing's return codes, e.g. `SBL: a known spam source; XBL: …`. */
export function codeMeaning(zone: string, codes: string[]): string {
  const info = zoneInfo(zone);
  return codes
    .map((code) => {
      if (info?.codes[code]) return info.codes[code];
      if (info?.bits) {
        const last = Number(code.split('.')[3]);
        const named = Object.entries(info.bits)
          .filter(([bit]) => last & Number(bit))
          .map(([, name]) => name);
        if (named.length) return named.join(', ');
      }
      return `listed (${code})`;
    })
    .join('; ');
}

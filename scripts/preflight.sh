#!/usr/bin/env bash
# What the test suite needs from the system, checked before it runs (`npm test`, scripts/test.ts)
# and by CI (.ci/run): Debian's packages that the tests drive. Missing ones are installed when this
# can be done without asking (root, or sudo without a password prompt); otherwise it stops at once
# and prints the one `apt-get install` line to run. Exit code 0 when everything is present.
set -euo pipefail

# One line per need: the Debian package, and a check that succeeds when it is there.
missing=()
need() {
  local package=$1
  shift
  "$@" >/dev/null 2>&1 || missing+=("$package")
}
has_initdb() { compgen -G '/usr/lib/postgresql/*/bin/initdb'; }
has_libcrypto3() { { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep -q 'libcrypto\.so\.3 '; }

check() {
  missing=()
  # SMTP submission is also tested with swaks, over STARTTLS and implicit TLS (Net::SSLeay).
  need swaks command -v swaks
  need libnet-ssleay-perl perl -MNet::SSLeay -e 1
  need dnsutils command -v dig
  # The dashboard tests drive Debian's Chromium through playwright-core (never a downloaded browser).
  need chromium test -x "${CHROMIUM_PATH:-/usr/bin/chromium}"
  # Cluster mode's tests start private PostgreSQL servers with Debian's initdb and pg_ctl
  # (test/helpers/postgres.ts); no PostgreSQL service of the system is used.
  need postgresql has_initdb
  # DKIM's RSA signatures go through the system's libcrypto.so.3 when it loads (src/mail/openssl.ts);
  # test/mail/dkim.test.ts checks it against node:crypto. Debian's openssl package depends on it.
  need openssl has_libcrypto3
  # Spam scores are tested against a real rspamd, a private one per test file on loopback
  # (test/helpers/rspamd.ts); installed without the recommended Redis, which it runs without.
  need rspamd command -v rspamd
  # Certificates by ACME are tested against Let's Encrypt's own test server, a private pebble per
  # test on loopback (test/helpers/pebble.ts).
  need pebble command -v pebble
}

check
((${#missing[@]} == 0)) && exit 0

install=(apt-get install -y --no-install-recommends "${missing[@]}")
# Who may install without a prompt: root, or sudo that does not ask for a password.
as_root=()
if [[ "$(id -u)" == 0 ]]; then
  allowed=1
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  allowed=1
  as_root=(sudo -n)
else
  allowed=0
fi
if ((!allowed)) || ! command -v apt-get >/dev/null 2>&1; then
  echo "preflight: the tests need Debian packages that are missing: ${missing[*]}" >&2
  echo "preflight: install them, then run the tests again:" >&2
  echo "  $([[ "$(id -u)" == 0 ]] || printf 'sudo ')${install[*]}" >&2
  exit 1
fi

echo "preflight: installing ${missing[*]}" >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive "${install[@]}" >&2

check
if ((${#missing[@]})); then
  echo "preflight: still missing after the install: ${missing[*]}" >&2
  exit 1
fi

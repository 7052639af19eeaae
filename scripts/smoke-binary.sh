#!/usr/bin/env bash
# Smoke-test a built single-file binary (default dist/posthorn; or pass a path as $1).
# Builds nothing, copies nothing: runs the binary where it is, from directories without a
# node_modules, against a throwaway data dir.
#
#   1. `posthorn version` from /
#   2. `posthorn serve` from a temp dir (fresh data dir, free HTTP and STARTTLS ports, implicit TLS off)
#   3. GET /health answers {"status":"ok"} within 30 s
#   4. GET /domains with the API key printed at first start answers 200
#   5. the embedded dashboard: / redirects to /dashboard, whose page and script are served
#   6. inbound mail: a message sent with curl over SMTP to a receiving domain is parsed and stored
#      (mailparser, which the back office loads when the first message arrives, and mailauth)
#   7. the embedded back office thread (delivery and webhooks) started: its `delivery.started` log line
#   8. stop the server, clean up
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$repo_root/dist/posthorn}"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac

say() { printf '[smoke] %s\n' "$*"; }
die() { printf '[smoke] FAIL: %s\n' "$*" >&2; show_logs; exit 1; }

tmp=""
server_pid=""
show_logs() {
  [[ -n "$tmp" ]] || return 0
  for f in serve.out serve.err; do
    if [[ -s "$tmp/$f" ]]; then
      printf -- '----- server %s (last 40 lines) -----\n' "${f#serve.}" >&2
      tail -n 40 "$tmp/$f" >&2
    fi
  done
}
stop_server() {
  [[ -n "$server_pid" ]] || return 0
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$server_pid" 2>/dev/null; then
      say "server did not stop within 10 s of SIGTERM; sending SIGKILL"
      kill -KILL "$server_pid" 2>/dev/null || true
    fi
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
cleanup() {
  stop_server
  [[ -n "$tmp" ]] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v curl >/dev/null || die "curl is required"
[[ -f "$bin" ]] || die "binary not found: $bin (run \`npm run build\` first)"
[[ -x "$bin" ]] || die "binary is not executable: $bin"
say "binary: $bin ($(du -h "$bin" | cut -f1))"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/posthorn-smoke.XXXXXX")"

# --- 1. version, from / -------------------------------------------------------------------------
say "posthorn version (cwd /)"
if ! version_out="$(cd / && "$bin" version 2>&1)"; then
  printf '%s\n' "$version_out" >&2
  die "\`posthorn version\` exited non-zero"
fi
[[ -n "$version_out" ]] || die "\`posthorn version\` printed nothing"
say "  $version_out"

# --- 2. serve, from a temp dir --------------------------------------------------------------------
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A free loopback port, none of the ones given.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    [[ " $* " == *" $p "* ]] && continue
    if port_is_free "$p"; then echo "$p"; return 0; fi
  done
  return 1
}
port="$(free_port)" || die "could not find a free TCP port"
smtp_port="$(free_port "$port")" || die "could not find a free TCP port for SMTP"
# DNS goes to a closed loopback port: lookups fail at once, nothing leaves 127.0.0.1.
dns_port="$(free_port "$port" "$smtp_port")" || die "could not find a free port for DNS"

say "posthorn serve (cwd $tmp, data $tmp/data, http port $port, smtp port $smtp_port)"
(
  cd "$tmp"
  exec env \
    POSTHORN_DATA_DIR="$tmp/data" \
    POSTHORN_HTTP_PORT="$port" \
    POSTHORN_SMTP_HOST=127.0.0.1 \
    POSTHORN_SMTP_HOSTNAME=mx.smoke.test \
    POSTHORN_SMTP_STARTTLS_PORTS="$smtp_port" \
    POSTHORN_SMTP_TLS_PORTS= \
    POSTHORN_DNS_SERVERS="127.0.0.1:$dns_port" \
    "$bin" serve >"$tmp/serve.out" 2>"$tmp/serve.err"
) &
server_pid=$!

# --- 3. /health ---------------------------------------------------------------------------------
base="http://127.0.0.1:$port"
deadline=$(( SECONDS + 30 ))
health=""
while :; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" && rc=0 || rc=$?
    server_pid=""
    die "server exited (status $rc) before /health answered"
  fi
  health="$(curl -sS --max-time 2 "$base/health" 2>/dev/null || true)"
  if [[ "$health" =~ \"status\"[[:space:]]*:[[:space:]]*\"ok\" ]]; then break; fi
  (( SECONDS < deadline )) || die "GET /health did not answer {\"status\":\"ok\"} within 30 s (last answer: ${health:-none})"
  sleep 0.2
done
say "GET /health → $health"

# --- 4. /domains with the first-start API key -----------------------------------------------------
key=""
while :; do
  key="$(grep -oE 're_[A-Za-z0-9_]{33}' "$tmp/serve.out" 2>/dev/null | head -n 1 || true)"
  [[ -n "$key" ]] && break
  (( SECONDS < deadline )) || die "no API key (re_…) found in the server's stdout"
  sleep 0.2
done
say "API key from stdout: ${key:0:7}…"

status="$(curl -sS --max-time 10 -o "$tmp/domains.json" -w '%{http_code}' \
  -H "Authorization: Bearer $key" "$base/domains" || true)"
if [[ "$status" != "200" ]]; then
  [[ -s "$tmp/domains.json" ]] && { printf 'response body: ' >&2; head -c 500 "$tmp/domains.json" >&2; echo >&2; }
  die "GET /domains answered HTTP ${status:-no response}, expected 200"
fi
say "GET /domains → 200 $(head -c 200 "$tmp/domains.json")"

# --- 5. the embedded dashboard ------------------------------------------------------------------
location="$(curl -sS --max-time 10 -o /dev/null -w '%{redirect_url}' "$base/" || true)"
[[ "$location" == */dashboard ]] || die "GET / did not redirect to /dashboard (got: ${location:-nothing})"
page="$(curl -sS --max-time 10 "$base/dashboard" || true)"
script="$(grep -oE '/dashboard/assets/main-[A-Za-z0-9]+\.js' <<<"$page" | head -n 1 || true)"
[[ -n "$script" ]] || die "GET /dashboard served no page with the app's script: ${page:0:300}"
status="$(curl -sS --max-time 10 -o "$tmp/app.js" -w '%{http_code}' "$base$script" || true)"
[[ "$status" == "200" && -s "$tmp/app.js" ]] || die "GET $script answered HTTP ${status:-no response}"
say "GET /dashboard → page and $script ($(wc -c <"$tmp/app.js") bytes)"

# --- 6. inbound mail over SMTP ---------------------------------------------------------------------
status="$(curl -sS --max-time 10 -o "$tmp/recv-domain.json" -w '%{http_code}' -X POST \
  -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"name":"recv.test","capabilities":{"sending":"disabled","receiving":"enabled"}}' "$base/domains" || true)"
[[ "$status" == "201" ]] || die "POST /domains (receiving) answered HTTP ${status:-no response}: $(head -c 300 "$tmp/recv-domain.json" 2>/dev/null)"
printf 'From: Smoke <smoke@source.test>\r\nTo: inbox@recv.test\r\nSubject: Smoke inbound\r\nMessage-ID: <smoke@source.test>\r\n\r\nHello from the smoke test.\r\n' >"$tmp/inbound.eml"
curl -sS --max-time 20 "smtp://127.0.0.1:$smtp_port" --mail-from smoke@source.test --mail-rcpt inbox@recv.test \
  --upload-file "$tmp/inbound.eml" >"$tmp/smtp.log" 2>&1 || die "curl could not send over SMTP: $(cat "$tmp/smtp.log")"
received=""
while :; do
  received="$(curl -sS --max-time 5 -H "Authorization: Bearer $key" "$base/emails/receiving" 2>/dev/null || true)"
  [[ "$received" == *'"subject":"Smoke inbound"'* ]] && break
  (( SECONDS < deadline + 30 )) || die "the message sent over SMTP was not stored (GET /emails/receiving: ${received:0:300})"
  sleep 0.2
done
say "SMTP → 250, stored: GET /emails/receiving lists \"Smoke inbound\""

# --- 8. stop (first, so that the log read below is complete) -------------------------------
stop_server
# --- 7. the back office's thread, an entrypoint of its own in the binary ------------------------
grep -q '"event":"delivery.started"' "$tmp/serve.out" || die "the delivery thread did not start (no delivery.started log line)"
say "delivery thread started"

say "OK"

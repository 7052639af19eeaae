// How each smtp-server connection is adapted to docs/api.md §17 and docs/mail.md §4: the one module
// that reaches into smtp-server's connection internals (docs/ARCHITECTURE.md §5, "Where Posthorn
// reaches into a library"). smtp-server has no option for any of it. Its exact version is pinned
// (package.json), the members used here are the library's own declarations (it ships its types),
// so `npm run typecheck` fails on one renamed or retyped, and test/dependencies/smtp-server.test.ts
// fails, naming the patch, when one of them no longer behaves as relied on here.
import type { SMTPServer } from 'smtp-server';
import type { Config } from '../config';
import { log } from '../log';
import { LineEndingCheck } from './line-endings';
import { HAS_ENHANCED_CODE, replies } from './replies';

/** One client session of smtp-server (its SMTPConnection). */
export type SmtpConnection = SMTPServer['connections'] extends Set<infer C> ? C : never;
/** smtp-server's command parser (its SMTPStream), which the socket is piped into. */
type Parser = ReturnType<SmtpConnection['_createParser']>;
type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

/**
 * Adapt a connection before it reads or writes anything — smtp-server adds it to its
 * `connections` set just before its init(), which is where server.ts calls this:
 * - bare CR/LF refused (`smtp.allow_bare_newlines` off);
 * - three replies as docs/api.md §17 has them: AUTH on an unencrypted session is 530 5.7.0
 *   (smtp-server says 538, a non-standard code); EHLO lists AUTH only once TLS is up, so that
 *   well-behaved clients never offer a key in the clear (RFC 4954 §4); and a reply text that starts
 *   with its own enhanced status code goes out as written — otherwise smtp-server adds the default
 *   one for the basic code (550 → 5.1.1, wrong for a relay refusal);
 * - the greeting after `smtp.greeting_delay` (0: at once) instead of smtp-server's fixed 100 ms.
 */
export function adaptConnection(conn: SmtpConnection, settings: Pick<Config['smtp'], 'allow_bare_newlines' | 'greeting_delay'>): void {
  if (!settings.allow_bare_newlines) strictLineEndings(conn);
  fixReplies(conn);
  greetAfter(conn, settings.greeting_delay);
}

/**
 * Refuse bare CR/LF (line-endings.ts): every byte the socket hands the command parser is looked at
 * first, so a message with one is never accepted and a command after one never runs. The parser
 * made with the connection is checked, and so is every one made later (`_createParser`: STARTTLS
 * gives the TLS session a parser of its own).
 */
function strictLineEndings(conn: SmtpConnection): void {
  if (conn._parser) watchParser(conn, conn._parser);
  const create = conn._createParser.bind(conn);
  conn._createParser = () => watchParser(conn, create());
}

function watchParser(conn: SmtpConnection, parser: Parser): Parser {
  const check = new LineEndingCheck();
  const write = parser.write.bind(parser) as Write;
  const checked: Write = (chunk, ...rest) => {
    if (!parser.isClosed && chunk instanceof Uint8Array) {
      const bare = check.scan(chunk);
      if (bare) {
        parser.isClosed = true;
        const r = replies.bareLineEnding(bare);
        log.warn('smtp.bare_line_ending', { session: conn.id, ip: conn.remoteAddress, kind: bare });
        conn.send(r.responseCode, r.message);
        conn.close();
        return true;
      }
    }
    return write(chunk, ...rest);
  };
  parser.write = checked as Parser['write'];
  return parser;
}

function fixReplies(conn: SmtpConnection): void {
  const send = conn.send.bind(conn);
  conn.send = (code, data, context) => {
    // The EHLO reply is the only multi-line 250 smtp-server sends: its extension list.
    if (code === 250 && Array.isArray(data) && !conn.secure) data = data.filter((line) => !/^AUTH /i.test(line));
    send(code, data, typeof data === 'string' && HAS_ENHANCED_CODE.test(data) ? false : context);
  };
  const auth = conn.handler_AUTH.bind(conn);
  conn.handler_AUTH = (command, callback) => {
    if (conn.secure) return auth(command, callback);
    const r = replies.startTlsFirst();
    conn.send(r.responseCode, r.message);
    callback();
  };
}

/**
 * smtp-server's init() sets the socket's listeners (`_setListeners`), checks its client limit in
 * their callback, then waits a fixed 100 ms before connectionReady() (greeting, and commands
 * accepted from then on; a command before it is refused "421 You talk too soon"). That pause capped
 * 16 sessions near 140 messages a second. Here the library's own call is made a no-op and
 * connectionReady() runs after `delayMs` instead — at once for 0, so the greeting is written
 * before any client byte is read. Its early-talker refusal still applies while a delay runs.
 */
function greetAfter(conn: SmtpConnection, delayMs: number): void {
  const ready = conn.connectionReady.bind(conn);
  const setListeners = conn._setListeners.bind(conn);
  let started = false;
  conn.connectionReady = () => {};
  conn._setListeners = (afterListeners) =>
    setListeners(() => {
      afterListeners(); // the client limit check, and the library's timer (now a no-op)
      if (started || conn._closing || conn._closed) return; // refused over the limit
      started = true;
      if (delayMs <= 0) return ready();
      setTimeout(() => conn._closing || conn._closed || ready(), delayMs).unref();
    });
}

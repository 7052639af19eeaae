// Canaries for what src/smtp/adapt.ts patches in smtp-server's connections (docs/ARCHITECTURE.md
// §5, "Where Posthorn reaches into a library"). smtp-server runs here unpatched, with the options
// of src/smtp/server.ts, on real loopback sockets; each test watches one internal adapt.ts relies
// on, the way adapt.ts replaces it (an own property of the connection), and fails naming the patch
// and what to read in the new version (node_modules/smtp-server/dist/esm/smtp-connection.js).
// The behaviour of the patched server is tested in test/smtp.
import { describe, test, expect, beforeAll, afterAll, afterEach } from 'bun:test';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SmtpDialog, plainAuth } from '../helpers/smtp';
import { sinkCertificate } from '../helpers/sink';

type Connection = SMTPServer['connections'] extends Set<infer C> ? C : never;
type Parser = ReturnType<Connection['_createParser']>;

const check = (patch: string, what: string) =>
  `smtp-server changed under src/smtp/adapt.ts ${patch}: ${what} — read smtp-connection.js of the new version and adapt the patch (docs/ARCHITECTURE.md §5)`;

/** What the test at hand does to each connection as it is added (adapt.ts's hook point). */
let onConnection: (conn: Connection) => void = () => {};
const dialogs: SmtpDialog[] = [];
const open = async (port: number) => {
  const d = await SmtpDialog.open(port);
  dialogs.push(d);
  return d;
};
afterEach(() => {
  onConnection = () => {};
  for (const d of dialogs.splice(0)) d.close();
});

/** smtp-server with server.ts's options on 127.0.0.1; `connections.add` hands each connection to `onConnection` first. */
async function start(options: SMTPServerOptions = {}) {
  const cert = await sinkCertificate();
  const server = new SMTPServer({
    key: cert.key,
    cert: cert.cert,
    name: 'mx.canary.test',
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: true,
    allowInsecureAuth: true,
    hideENHANCEDSTATUSCODES: false,
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 100,
    onConnect: (_session, callback) => callback(),
    onSecure: (_socket, _session, callback) => callback(),
    onAuth: (_auth, _session, callback) => callback(null, { user: 'canary' }),
    ...options,
  });
  const add = server.connections.add.bind(server.connections);
  server.connections.add = (conn: Connection) => {
    onConnection(conn);
    return add(conn);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.server.address() as AddressInfo).port };
}

let plain: Awaited<ReturnType<typeof start>>;
let limited: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  plain = await start();
  limited = await start({ maxClients: 1 });
});
afterAll(async () => {
  await Promise.all([plain, limited].map(({ server }) => new Promise<void>((resolve) => server.close(() => resolve()))));
});

describe('smtp-server: the hook (adapt.ts adaptConnection, called from server.ts `connections.add`)', () => {
  test('each connection is added to `connections` before its init(), its command parser already made', async () => {
    const events: string[] = [];
    onConnection = (conn) => {
      events.push(`added, parser ${conn._parser && typeof conn._parser.write === 'function' ? 'made' : 'missing'}`);
      const init = conn.init.bind(conn);
      conn.init = () => {
        events.push('init');
        init();
      };
    };
    await open(plain.port);
    expect(events, check('adaptConnection', 'a connection is no longer added (with its parser) right before init()')).toEqual(['added, parser made', 'init']);
  });
});

describe('smtp-server: the greeting (adapt.ts greetAfter)', () => {
  /** Per connection, what happened to `_setListeners`, its callback and `connectionReady`. */
  function watchGreeting(events: Map<string, string[]>) {
    onConnection = (conn) => {
      const log: string[] = [];
      events.set(conn.id, log);
      const setListeners = conn._setListeners.bind(conn);
      conn._setListeners = (callback) => {
        log.push('_setListeners');
        setListeners(() => {
          log.push('callback');
          callback();
          log.push(`after callback: closing ${conn._closing || conn._closed}`);
        });
      };
      const ready = conn.connectionReady.bind(conn);
      conn.connectionReady = (next) => {
        log.push('connectionReady');
        ready(next);
        log.push(`greeted: ${conn._ready}`);
      };
    };
  }

  test('init() sets the listeners, whose callback is followed by connectionReady() (read off the connection), which greets at once', async () => {
    const events = new Map<string, string[]>();
    watchGreeting(events);
    const c = await open(plain.port);
    expect((await c.command('NOOP')).code).toBe(250);
    expect([...events.values()], check('greetAfter', 'the order _setListeners → its callback → connectionReady() changed')).toEqual([
      ['_setListeners', 'callback', 'after callback: closing false', 'connectionReady', 'greeted: true'],
    ]);
  });

  test('over maxClients the callback refuses the connection, closing it before connectionReady() could run', async () => {
    const events = new Map<string, string[]>();
    watchGreeting(events);
    await open(limited.port);
    const second = await SmtpDialog.connect(limited.port);
    dialogs.push(second);
    expect((await second.read()).text).toMatch(/^421 .*Too many connected clients/);
    const logs = [...events.values()];
    expect(logs[1], check('greetAfter', 'a connection over maxClients is no longer closed (_closing/_closed) inside the listeners callback')).toEqual([
      '_setListeners',
      'callback',
      'after callback: closing true',
    ]);
  });
});

describe('smtp-server: the bare CR/LF check (adapt.ts strictLineEndings)', () => {
  test('the socket writes into `_parser.write` (an own property wins); STARTTLS makes a new parser with `_createParser()` for the TLS session', async () => {
    const seen: Record<string, string> = {};
    onConnection = (conn) => {
      const watch = (name: string, parser: Parser) => {
        const write = parser.write.bind(parser) as (chunk: unknown, ...rest: unknown[]) => boolean;
        parser.write = ((chunk: unknown, ...rest: unknown[]) => {
          if (chunk instanceof Uint8Array) seen[name] = (seen[name] ?? '') + Buffer.from(chunk).toString('latin1');
          return write(chunk, ...rest);
        }) as typeof parser.write;
        return parser;
      };
      if (conn._parser) watch('made with the connection', conn._parser);
      const create = conn._createParser.bind(conn);
      conn._createParser = () => watch('made by _createParser', create());
    };
    const c = await open(plain.port);
    await c.command('EHLO client.test');
    await c.startTls();
    expect((await c.command('EHLO tls.test')).code).toBe(250);
    expect(seen['made with the connection'], check('strictLineEndings', 'socket bytes no longer reach the parser through its write()')).toBe(
      'EHLO client.test\r\nSTARTTLS\r\n',
    );
    expect(seen['made by _createParser'], check('strictLineEndings', 'the TLS session no longer gets its parser from _createParser()')).toBe(
      'EHLO tls.test\r\n',
    );
  });

  test('a parser set `isClosed` and a send() then close() refuse the rest: the reply goes out, the connection ends, nothing after it runs', async () => {
    const ran: string[] = [];
    onConnection = (conn) => {
      const parser = conn._parser;
      if (!parser) return;
      const write = parser.write.bind(parser) as (chunk: unknown, ...rest: unknown[]) => boolean;
      parser.write = ((chunk: unknown, ...rest: unknown[]) => {
        if (chunk instanceof Uint8Array && Buffer.from(chunk).includes('\n\n')) {
          parser.isClosed = true;
          conn.send(521, '5.5.2 refused', false);
          conn.close();
          return true;
        }
        return write(chunk, ...rest);
      }) as typeof parser.write;
      const noop = conn.handler_NOOP.bind(conn);
      conn.handler_NOOP = (command, callback) => {
        ran.push('NOOP');
        noop(command, callback);
      };
    };
    const c = await open(plain.port);
    expect((await c.data('NOOP\r\n\n\nNOOP\r\n')).text, check('strictLineEndings', 'send()/close() on a refused chunk')).toBe('521 5.5.2 refused');
    expect(await c.closedByServer(), check('strictLineEndings', 'close() no longer ends the connection')).toBe(true);
    expect(ran, check('strictLineEndings', 'a command in the refused chunk still ran')).toEqual([]);
  });
});

describe('smtp-server: the reply fixes (adapt.ts fixReplies)', () => {
  test('send(code, data, context) is the one way replies go out: the EHLO reply is the only multi-line 250, with AUTH listed; `secure` tells TLS', async () => {
    const sends: { code: number; data: unknown; context: unknown; secure: boolean }[] = [];
    onConnection = (conn) => {
      const send = conn.send.bind(conn);
      conn.send = (code, data, context) => {
        sends.push({ code, data, context, secure: conn.secure });
        send(code, data, context);
      };
    };
    const c = await open(plain.port);
    await c.command('EHLO client.test');
    await c.command('MAIL FROM:<a@client.test>');
    await c.command('RCPT TO:<b@canary.test>');
    await c.command('RSET');
    await c.command('NOOP');
    await c.command('HELP');
    await c.startTls();
    await c.command('EHLO tls.test');
    const lists = sends.filter((s) => s.code === 250 && Array.isArray(s.data));
    expect(sends[0]?.code, check('fixReplies', 'the greeting no longer goes through send()')).toBe(220);
    expect(lists.length, check('fixReplies', 'the EHLO reply is no longer the one multi-line 250 (send(250, lines))')).toBe(2);
    expect(
      lists.map((s) => [s.secure, (s.data as string[]).includes('AUTH PLAIN LOGIN'), s.context]),
      check('fixReplies', 'EHLO lists AUTH as "AUTH PLAIN LOGIN", `secure` says whether TLS is up'),
    ).toEqual([
      [false, true, false],
      [true, true, false],
    ]);
  });

  test("an own `handler_AUTH` replaces the library's; send() with context false writes the text as given, without it adds the table's code", async () => {
    onConnection = (conn) => {
      conn.handler_AUTH = (_command, callback) => {
        conn.send(530, '5.7.0 Must issue a STARTTLS command first', false);
        conn.send(550, '5.7.1 Relaying denied');
        callback();
      };
    };
    const c = await open(plain.port);
    await c.command('EHLO client.test');
    expect((await c.command(`AUTH PLAIN ${plainAuth('u', 'p')}`)).text, check('fixReplies', 'handler_AUTH is no longer looked up on the connection')).toBe(
      '530 5.7.0 Must issue a STARTTLS command first',
    );
    // Why server.ts passes `false` for a text that carries its own code: the default is the table's (550 → 5.1.1).
    expect((await c.read()).text, check('fixReplies', 'send() without a context')).toBe('550 5.1.1 5.7.1 Relaying denied');
  });
});

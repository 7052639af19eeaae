// A large body's attachments read as streams from their files (Contents.getOpening, used by a
// delivery attempt to compose a large message without holding it, sending/message.ts openContent):
// the files asked for are left out of `files` and opened anew at each call, in pieces of the size
// asked; the others are read whole as `get` reads them; a small body, and every body in PostgreSQL
// (rows), comes whole. SpillFiles.open
// reads a record's file from the trash once the record is deleted (as SpillFiles.read does), and
// gives an empty stream when the file is nowhere.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openStore, type EmailContent, type Store } from '../../src/store';
import { SpillFiles } from '../../src/store/lmdb/spill';
import { postgres } from '../helpers/postgres';

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'posthorn-contents-opening-'));
  store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const read = async (s: AsyncIterable<Uint8Array>) => {
  const pieces: Buffer[] = [];
  for await (const p of s) pieces.push(Buffer.from(p));
  return pieces;
};

const content = (files: Record<string, Uint8Array>): EmailContent => ({ html: null, text: 'x', files });

describe('Contents.getOpening', () => {
  test('a large body: the attachments asked for are opened as streams of the piece size asked, anew at each call; the others read whole', async () => {
    const team = 'team-a';
    const id = '0195608a-51e4-70ed-a079-d3bde8e25d01';
    const big = randomBytes(700 * 1024);
    const other = randomBytes(300 * 1024);
    await store.write(async (tx) => tx.emailContent.put(team, id, content({ big, other })));
    const got = (await store.emailContent.getOpening(team, id, ['big'], 57 * 16))!;
    expect(Object.keys(got.content.files)).toEqual(['other']);
    expect(Buffer.compare(Buffer.from(got.content.files.other!), other)).toBe(0);
    expect(Object.keys(got.open)).toEqual(['big']);
    for (let i = 0; i < 2; i++) {
      const pieces = await read(got.open.big!());
      expect(pieces.slice(0, -1).every((p) => p.byteLength === 57 * 16)).toBe(true);
      expect(Buffer.concat(pieces).equals(big)).toBe(true);
    }
    expect(await store.emailContent.getOpening(team, '0195608a-51e4-70ed-a079-d3bde8e25d02', ['big'], 1024)).toBeUndefined();
  });

  test('in PostgreSQL a large body comes whole, nothing to open', async () => {
    const pg = await openStore({ dataDir: '/nonexistent', databaseUrl: await (await postgres()).database(), retentionDays: 30, holdMs: 0 });
    try {
      const big = randomBytes(700 * 1024);
      await pg.write(async (tx) => tx.emailContent.put('team-a', '0195608a-51e4-70ed-a079-d3bde8e25d06', content({ big })));
      const got = (await pg.emailContent.getOpening('team-a', '0195608a-51e4-70ed-a079-d3bde8e25d06', ['big'], 1024))!;
      expect(got.open).toEqual({});
      expect(Buffer.compare(Buffer.from(got.content.files.big!), big)).toBe(0);
    } finally {
      await pg.close();
    }
  });

  test('a small body comes whole, nothing to open', async () => {
    const team = 'team-a';
    const id = '0195608a-51e4-70ed-a079-d3bde8e25d03';
    const small = randomBytes(1024);
    await store.write(async (tx) => tx.emailContent.put(team, id, content({ small })));
    const got = (await store.emailContent.getOpening(team, id, ['small'], 1024))!;
    expect(got.open).toEqual({});
    expect(Buffer.compare(Buffer.from(got.content.files.small!), small)).toBe(0);
  });
});

describe("Contents.sized (a delivery attempt's one read)", () => {
  /** Both backends: a body kept in files (LMDB, past 256 KB) and a small one; the size always, the body under the line. */
  const check = async (s: Store) => {
    const team = 'team-a';
    const big = randomBytes(400 * 1024);
    const small = randomBytes(1000);
    const [bigId, smallId] = ['0195608a-51e4-70ed-a079-d3bde8e25d10', '0195608a-51e4-70ed-a079-d3bde8e25d11'];
    await s.write(async (tx) => {
      tx.emailContent.put(team, bigId, { ...content({ big }), raw: small });
      tx.emailContent.put(team, smallId, content({ small }));
    });
    expect(await s.emailContent.sized(team, bigId, 64 * 1024)).toEqual({ size: big.byteLength + small.byteLength });
    const whole = (await s.emailContent.sized(team, bigId, 1 << 20))!;
    expect(whole.size).toBe(big.byteLength + small.byteLength);
    expect(Buffer.compare(Buffer.from(whole.content!.files.big!), big)).toBe(0);
    expect(Buffer.compare(Buffer.from(whole.content!.raw!), small)).toBe(0);
    const got = (await s.emailContent.sized(team, smallId, 64 * 1024))!;
    expect(got.size).toBe(small.byteLength);
    expect(got.content!.text).toBe('x');
    expect(Buffer.compare(Buffer.from(got.content!.files.small!), small)).toBe(0);
    // The line is exclusive: a body of exactly that size comes without its bytes.
    expect(await s.emailContent.sized(team, smallId, small.byteLength)).toEqual({ size: small.byteLength });
    expect(await s.emailContent.sized(team, '0195608a-51e4-70ed-a079-d3bde8e25d12', 1 << 20)).toBeUndefined();
  };

  test('LMDB', () => check(store));

  test('PostgreSQL', async () => {
    const pg = await openStore({ dataDir: '/nonexistent', databaseUrl: await (await postgres()).database(), retentionDays: 30, holdMs: 0 });
    try {
      await check(pg);
    } finally {
      await pg.close();
    }
  });
});

describe('SpillFiles.open', () => {
  test('from the file, then from the trash once its record is deleted; empty when the file is nowhere', async () => {
    const spill = new SpillFiles(join(dir, 'spill-open'));
    const bytes = randomBytes(200 * 1024);
    spill.write('ns', 'team', '0195608a-51e4-70ed-a079-d3bde8e25d04', 'file-a', bytes);
    const open = () => spill.open('ns', 'team', '0195608a-51e4-70ed-a079-d3bde8e25d04', 'file-a', 64 * 1024);
    expect(Buffer.concat(await read(open())).equals(bytes)).toBe(true);
    // Opened before the move, read after it: the descriptor holds the file.
    const early = open();
    spill.trash('ns', 'team', '0195608a-51e4-70ed-a079-d3bde8e25d04', ['file-a']);
    expect(Buffer.concat(await read(early)).equals(bytes)).toBe(true);
    expect(Buffer.concat(await read(open())).equals(bytes)).toBe(true);
    expect(await read(spill.open('ns', 'team', '0195608a-51e4-70ed-a079-d3bde8e25d05', 'file-a', 1024))).toEqual([]);
  });
});

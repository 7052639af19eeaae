// Large emails end to end: an attachment past the 256 KB line is written to a file (fsynced) before
// the unit of work that names it, the record holds only its size, delivery composes the message
// from the file (DKIM verifies, the attachment arrives intact), the download reads the file, and a
// unit of work that fails after the files were written leaves none of them in place.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { waitForEmail } from '../helpers/emails';
import { prepare, commit } from '../../src/sending/submit';
import { STREAM_MESSAGE_FROM } from '../../src/delivery/engine';
import { composeEmail, composeEmailStream, openContent } from '../../src/sending/message';

let w: MailWorld;
beforeAll(async () => {
  w = await startMailWorld();
});
afterAll(async () => {
  await w.stop();
});

/** Every file under `dir` (recursively), relative paths. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

describe('a large attachment', () => {
  test('is a file beside the record; delivered intact and DKIM-signed; downloaded from the file', async () => {
    const bytes = randomBytes(600 * 1024);
    const { data, error } = await w.p.resend.emails.send({
      from: 'Big <big@example.test>',
      to: 'ann@dest.test',
      subject: 'Large',
      text: 'See the attachment.',
      attachments: [{ filename: 'big.bin', content: bytes.toString('base64') }],
    });
    expect(error).toBeNull();
    const id = data!.id;
    const team = w.p.creds.team_id;
    const content = join(w.p.dataDir, 'content', 'email_content');
    expect(files(content).filter((f) => f.includes(id) && !f.startsWith('.trash'))).toHaveLength(1);
    expect(await w.p.svc.store.emailContent.byteSize(team, id)).toBe(bytes.byteLength);
    // With its size, the body itself only when under the line asked for (the delivery engine's one read).
    expect(await w.p.svc.store.emailContent.sized(team, id, bytes.byteLength)).toEqual({ size: bytes.byteLength });
    const sized = (await w.p.svc.store.emailContent.sized(team, id, bytes.byteLength + 1))!;
    expect(sized.size).toBe(bytes.byteLength);
    expect(Buffer.compare(Object.values(sized.content!.files)[0]!, bytes)).toBe(0);
    expect(await w.p.svc.store.emailContent.sized(team, '0195608a-51e4-70ed-a079-d3bde8e25d02', 1 << 20)).toBeUndefined();

    await waitForEmail(w.p.svc, { team_id: team, id }, (e) => e.last_event === 'delivered');
    const [msg] = await w.sink.waitFor(1);
    const parsed = await simpleParser(msg!.raw);
    expect(Buffer.compare(parsed.attachments[0]!.content, bytes)).toBe(0);
    const auth = await authenticateReceived(w.dns, msg!);
    expect(auth.dkim.results[0]?.status.result).toBe('pass');

    const att = (await w.p.api('GET', `/emails/${id}/attachments`)).body.data[0];
    // The link is under public_url (not set here): the same path on the test server.
    const download = await fetch(`${w.p.url}${new URL(att.download_url).pathname}`);
    expect(Buffer.compare(Buffer.from(await download.arrayBuffer()), bytes)).toBe(0);
  });

  test('past 1 MB, streamed through its attempt: the bytes of the whole path (the signature, then GET /emails/{id}/raw), DKIM passes', async () => {
    // Composed twice (to sign, then to send) and never held whole: its stored parts are past
    // delivery/engine.ts STREAM_MESSAGE_FROM (the engine runs on the back office thread, out of reach of a spy).
    const bytes = randomBytes(STREAM_MESSAGE_FROM + 300 * 1024);
    const { data, error } = await w.p.resend.emails.send({
      from: 'Big <big@example.test>',
      to: 'streamed@dest.test',
      subject: 'Larger',
      html: '<p>See the <b>attachment</b>.</p>',
      attachments: [{ filename: 'larger.bin', content: bytes.toString('base64') }],
    });
    expect(error).toBeNull();
    const team = w.p.creds.team_id;
    await waitForEmail(w.p.svc, { team_id: team, id: data!.id }, (e) => e.last_event === 'delivered');
    expect(await w.p.svc.store.emailContent.byteSize(team, data!.id)).toBeGreaterThanOrEqual(STREAM_MESSAGE_FROM);
    const msg = w.sink.messages.find((m) => m.rcptTo.includes('streamed@dest.test'))!;
    const raw = await fetch(`${w.p.url}/emails/${data!.id}/raw`, { headers: { authorization: `Bearer ${w.p.creds.api_key}` } });
    expect(raw.status).toBe(200);
    const unsigned = Buffer.from(await raw.arrayBuffer());
    const end = msg.raw.indexOf(unsigned.subarray(0, 40));
    expect(msg.raw.subarray(0, end).toString('latin1')).toMatch(/^(DKIM-Signature: [\s\S]*\r\n)+$/);
    expect(msg.raw.subarray(end).equals(unsigned)).toBe(true);
    expect(Buffer.compare((await simpleParser(msg.raw)).attachments[0]!.content, bytes)).toBe(0);
    expect((await authenticateReceived(w.dns, msg)).dkim.results[0]?.status.result).toBe('pass');
  });

  test('past 1 MB, its attachments composed from their files as streams: the bytes composing the whole payloads gives, a message/* part read whole; delivered, DKIM passes', async () => {
    const big = randomBytes(STREAM_MESSAGE_FROM + 100 * 1024 + 7); // not a whole number of base64 lines
    const notes = Buffer.from(`Notes — straße\n${'line of text\n'.repeat(30_000)}`, 'utf8');
    const forwarded = Buffer.from(`Subject: inner\nFrom: a@b.test\n\n${'inner body\n'.repeat(30_000)}`, 'latin1');
    const { data, error } = await w.p.resend.emails.send({
      from: 'Big <big@example.test>',
      to: 'files@dest.test',
      subject: 'From files',
      html: '<p>Three files.</p>',
      attachments: [
        { filename: 'big.bin', content: big.toString('base64') },
        { filename: 'notes.txt', content: notes.toString('base64'), contentType: 'text/plain' },
        { filename: 'fwd.eml', content: forwarded.toString('base64'), contentType: 'message/rfc822' },
      ],
    });
    expect(error).toBeNull();
    const team = w.p.creds.team_id;
    const email = await waitForEmail(w.p.svc, { team_id: team, id: data!.id }, (e) => e.last_event === 'delivered');
    const { store } = w.p.svc;
    const opened = (await openContent(store.emailContent, email))!;
    // Only the message/* part is read into memory; the others stay in their files.
    const [bin, txt, eml] = email.attachments.map((a) => a.id) as [string, string, string];
    expect(Object.keys(opened.content.files)).toEqual([eml]);
    expect(Object.keys(opened.open).sort()).toEqual([bin, txt].sort());
    const domain = (await store.domains.get(team, email.domain_id)) ?? null;
    const whole = Buffer.from(await composeEmail(w.p.svc, email, (await store.emailContent.get(team, email.id))!, domain));
    const streamed = composeEmailStream(w.p.svc, email, opened.content, domain, opened.open)!;
    // Twice, as a delivery attempt reads it (to sign, then to send): each read opens the files anew.
    for (let i = 0; i < 2; i++) expect(Buffer.concat(await Array.fromAsync(streamed())).equals(whole)).toBe(true);
    expect(Buffer.from(await composeEmail(w.p.svc, email, opened.content, domain, opened.open)).equals(whole)).toBe(true);
    const msg = w.sink.messages.find((m) => m.rcptTo.includes('files@dest.test'))!;
    expect(msg.raw.subarray(msg.raw.length - whole.length).equals(whole)).toBe(true);
    const parsed = await simpleParser(msg.raw);
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['big.bin', 'notes.txt', 'fwd.eml']);
    expect(Buffer.compare(parsed.attachments[0]!.content, big)).toBe(0);
    expect(Buffer.compare(parsed.attachments[1]!.content, notes)).toBe(0);
    expect((await authenticateReceived(w.dns, msg)).dkim.results[0]?.status.result).toBe('pass');
  });

  test('a unit of work that fails after its files were written leaves none of them in place', async () => {
    const team = w.p.creds.team_id;
    const input = {
      from: 'big@example.test',
      to: 'bob@dest.test',
      subject: 'Never',
      text: 'x',
      attachments: [{ filename: 'b.bin', content: randomBytes(400 * 1024).toString('base64') }],
    };
    const p = await prepare(w.p.svc, { team, key: null }, input);
    const boom = new Error('refused inside the unit of work');
    await expect(commit(w.p.svc, [p], { also: () => Promise.reject(boom) })).rejects.toBe(boom);
    expect(await w.p.svc.store.emails.get(team, p.email.id)).toBeUndefined();
    const content = join(w.p.dataDir, 'content', 'email_content');
    expect(files(content).filter((f) => f.includes(p.email.id) && !f.startsWith('.trash'))).toEqual([]);
  });
});

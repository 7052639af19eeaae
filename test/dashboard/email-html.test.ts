// The block editor's email HTML (web/src/editor/email-html.ts): each block as table markup with
// inline styles, escaping (braces too: typed text never becomes a placeholder), URLs limited to
// http(s)/mailto or a whole placeholder, the footer's unsubscribe tag, and the document embedded
// and read back (web/src/editor/mode.ts: HTML changed by hand no longer opens as blocks).
import { describe, expect, test } from 'bun:test';
import { docFromHtml, emailHtml, esc, placeholderTag, safeUrl, type DocNode } from '../../web/src/editor/email-html';
import { blocksOf, starterDoc } from '../../web/src/editor/mode';
import { cleanPastedHtml } from '../../web/src/editor/paste';
import { fillForContact } from '../../web/src/editor/broadcast-preview';

const doc = (...content: DocNode[]): DocNode => ({ type: 'doc', content });
const text = (t: string, marks?: DocNode['marks']): DocNode => ({ type: 'text', text: t, marks });

describe('blocks as email HTML', () => {
  const cases: [string, DocNode, string[]][] = [
    ['heading', { type: 'heading', attrs: { level: 2 }, content: [text('Hi')] }, ['<h2 style="margin:0;', 'font-size:22px', '>Hi</h2>']],
    [
      'paragraph with marks',
      { type: 'paragraph', content: [text('a', [{ type: 'bold' }]), text('b', [{ type: 'link', attrs: { href: 'https://x.test/?a=1&b=2' } }])] },
      ['<strong>a</strong>', '<a href="https://x.test/?a=1&amp;b=2" style="color:#4f46e5'],
    ],
    ['empty paragraph keeps its line', { type: 'blockquote', content: [{ type: 'paragraph' }] }, ['&nbsp;</p>', 'border-left:4px solid']],
    [
      'button (bulletproof: the colour on the cell)',
      { type: 'button', attrs: { label: 'Go <now>', href: 'https://x.test' } },
      ['bgcolor="#4f46e5"', '<a href="https://x.test" style="display:inline-block;padding:12px 24px', '>Go &lt;now&gt;</a>'],
    ],
    ['divider', { type: 'horizontalRule' }, ['border-top:1px solid #e4e4e7']],
    ['spacer', { type: 'spacer', attrs: { height: 40 } }, ['<td height="40" style="height:40px']],
    [
      'image',
      { type: 'image', attrs: { src: 'https://x.test/a.png', alt: 'A "cat"' } },
      ['<img src="https://x.test/a.png" alt="A &quot;cat&quot;" width="552"', 'max-width:552px'],
    ],
    [
      'two columns, stacked on a phone by class',
      {
        type: 'columns',
        content: [
          { type: 'column', content: [{ type: 'paragraph', content: [text('L')] }] },
          { type: 'column', content: [{ type: 'paragraph', content: [text('R')] }] },
        ],
      },
      ['<td class="ph-col" width="276" valign="top"', '>L</p>', '>R</p>', '@media (max-width:620px){.ph-col{display:block!important'],
    ],
    [
      'footer with the unsubscribe tag',
      { type: 'footer', content: [text('Acme, 1 Road')] },
      ['Acme, 1 Road<br><a href="{{{RESEND_UNSUBSCRIBE_URL}}}"', '>Unsubscribe</a>'],
    ],
    [
      'placeholder',
      { type: 'paragraph', content: [{ type: 'placeholder', attrs: { name: 'contact.first_name', fallback: 'there' } }] },
      ['{{{contact.first_name|there}}}'],
    ],
    [
      'list',
      { type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [text('one')] }] }] },
      ['<ul style="margin:0;padding-left:24px', '<li style="margin:0 0 4px 0">one</li>'],
    ],
  ];
  for (const [name, node, parts] of cases)
    test(name, () => {
      const html = emailHtml(doc(node));
      for (const p of parts) expect(html).toContain(p);
    });

  test('the page: a 600px presentation table, the Outlook wrapper, no script', () => {
    const html = emailHtml(starterDoc({ name: 'contact.first_name', fallback: 'there' }));
    expect(html).toStartWith('<!doctype html>');
    expect(html).toContain('<!--[if mso]><table role="presentation" width="600"');
    expect(html).toContain('max-width:600px;background:#ffffff');
    expect(html).not.toMatch(/<script|<div/i);
  });

  test('typed braces are not placeholders; unsafe URLs are dropped', () => {
    expect(esc('{{{x}}}')).toBe('&#123;&#123;&#123;x&#125;&#125;&#125;');
    expect(safeUrl('javascript:alert(1)')).toBe('');
    expect(safeUrl('data:text/html,x')).toBe('');
    expect(safeUrl('{{{RESEND_UNSUBSCRIBE_URL}}}')).toBe('{{{RESEND_UNSUBSCRIBE_URL}}}');
    expect(safeUrl('mailto:a@b.test')).toBe('mailto:a@b.test');
    expect(placeholderTag('contact.first_name}}}<b>', 'x}}|y')).toBe('{{{contact.first_nameb|xy}}}');
    const html = emailHtml(doc({ type: 'button', attrs: { label: 'x', href: 'javascript:alert(1)' } }));
    expect(html).toContain('<a href="#"');
  });

  test('trailing empty paragraphs (the editor keeps one to type in) are left out', () => {
    const with_ = emailHtml(doc({ type: 'paragraph', content: [text('x')] }, { type: 'paragraph' }));
    const body = (html: string) => html.replace(/<!--posthorn-blocks:[^>]*-->/, '');
    expect(body(with_)).toBe(body(emailHtml(doc({ type: 'paragraph', content: [text('x')] }))));
    expect(with_.match(/&nbsp;<\/p>/g)).toBeNull();
  });
});

describe('the document in the HTML', () => {
  test('embedded and read back, text of any script included; no `--` nor braces in the comment', () => {
    const d = doc({ type: 'paragraph', content: [text('Grüße -- {{{x}}} --> 🎉')] });
    const html = emailHtml(d);
    const comment = /<!--posthorn-blocks:(.*?)-->/.exec(html)![1]!;
    expect(comment).not.toMatch(/--|[{}]/);
    expect(docFromHtml(html)).toEqual(d);
    expect(blocksOf(html)).toEqual(d);
  });

  test('HTML written or changed by hand does not open as blocks', () => {
    expect(blocksOf('<p>Hello</p>')).toBeNull();
    expect(blocksOf(null)).toBeNull();
    const html = emailHtml(starterDoc({ name: 'contact.first_name', fallback: 'there' }));
    expect(blocksOf(html.replace('Write your message here.', 'Changed by hand.'))).toBeNull();
    expect(docFromHtml('<!--posthorn-blocks:not json-->')).toBeNull();
  });
});

describe('paste and preview', () => {
  test('pasted HTML loses styles, classes, scripts and Word comments', () => {
    const out = cleanPastedHtml(
      '<!--[if gte mso 9]><xml>x</xml><![endif]--><style>p{}</style><p class="MsoNormal" style="color:red">Hi <b>there</b></p><script>x()</script>',
    );
    expect(out).toBe('<p>Hi <b>there</b></p>');
  });

  test("a broadcast's placeholders filled from a contact, as the server does (docs/api.md §13.4)", () => {
    const ann = { email: 'ann@x.test', first_name: 'Ann <3', last_name: null };
    expect(fillForContact('Hi {{{contact.first_name|there}}} {{{ LAST_NAME | X }}} {{{other}}}', ann, 'html')).toBe('Hi Ann &lt;3 X {{{other}}}');
    expect(fillForContact('{{{contact.first_name|there}}}', null, 'text')).toBe('there');
    expect(fillForContact('<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">', ann, 'html')).toBe('<a href="#unsubscribe">');
  });
});

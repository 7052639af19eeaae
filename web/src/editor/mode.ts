// Which editor an email's HTML opens in: blocks when it is exactly what the block editor made of
// its embedded document (docs: email-html.ts), else the HTML view — HTML written or changed by hand
// cannot be turned into blocks.
import { type DocNode, docFromHtml, emailHtml } from './email-html';

export function blocksOf(html: string | null | undefined): DocNode | null {
  const doc = docFromHtml(html);
  return doc && emailHtml(doc) === html ? doc : null;
}

/** A new email's document: a heading, a greeting (with a placeholder when given), a line, the footer. */
export function starterDoc(greeting: { name: string; fallback: string } | null): DocNode {
  return {
    type: 'doc',
    content: [
      { type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'Your headline' }] },
      {
        type: 'paragraph',
        content: greeting
          ? [
              { type: 'text', text: 'Hello ' },
              { type: 'placeholder', attrs: { ...greeting } },
              { type: 'text', text: ',' },
            ]
          : [{ type: 'text', text: 'Hello,' }],
      },
      { type: 'paragraph', content: [{ type: 'text', text: 'Write your message here.' }] },
      { type: 'footer', content: [{ type: 'text', text: 'You receive this email because you subscribed.' }] },
    ],
  };
}

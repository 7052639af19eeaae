// The block editor's own nodes, next to TipTap's StarterKit (headings, paragraphs, lists, quote,
// divider = horizontalRule with its `---` shortcut, marks, undo/redo) and Image: a button, two
// columns, a spacer, the footer with its unsubscribe link, and placeholders (merge tags). Each is
// turned into email HTML by email-html.ts; here they are only how the editor shows and parses them.
import { mergeAttributes, Node, nodeInputRule } from '@tiptap/core';

/** A call-to-action button: a label and a link (an atom: edited in the block settings). */
export const Button = Node.create({
  name: 'button',
  group: 'block',
  atom: true,
  selectable: true,
  draggable: true,
  addAttributes() {
    return { label: { default: 'Click here' }, href: { default: 'https://' }, align: { default: 'center' } };
  },
  parseHTML() {
    return [
      {
        tag: 'div[data-type="button"]',
        getAttrs: (el) => ({ label: el.textContent, href: el.getAttribute('data-href'), align: el.getAttribute('data-align') }),
      },
    ];
  },
  renderHTML({ node, HTMLAttributes }) {
    return [
      'div',
      mergeAttributes(HTMLAttributes, {
        'data-type': 'button',
        'data-href': node.attrs.href,
        'data-align': node.attrs.align,
        class: `blk-button ${node.attrs.align}`,
      }),
      ['span', { class: 'blk-button-face' }, node.attrs.label || 'Button'],
    ];
  },
});

/** Vertical space of a height in pixels. */
export const Spacer = Node.create({
  name: 'spacer',
  group: 'block',
  atom: true,
  selectable: true,
  draggable: true,
  addAttributes() {
    return { height: { default: 24 } };
  },
  parseHTML() {
    return [{ tag: 'div[data-type="spacer"]', getAttrs: (el) => ({ height: Number(el.getAttribute('data-height')) || 24 }) }];
  },
  renderHTML({ node }) {
    // Heights by class (CSP: no style attribute needed), in steps of 8px.
    const h = Math.min(96, Math.max(8, Math.round(Number(node.attrs.height) / 8) * 8));
    return ['div', { 'data-type': 'spacer', 'data-height': node.attrs.height, class: `blk-spacer h${h}`, title: `Space: ${node.attrs.height}px` }];
  },
});

export const Column = Node.create({
  name: 'column',
  content: 'block+',
  isolating: true,
  parseHTML() {
    return [{ tag: 'div[data-type="column"]' }];
  },
  renderHTML() {
    return ['div', { 'data-type': 'column', class: 'blk-column' }, 0];
  },
});

/** Two columns side by side (stacked on a phone by the email's own media query). */
export const Columns = Node.create({
  name: 'columns',
  group: 'block',
  content: 'column column',
  isolating: true,
  defining: true,
  parseHTML() {
    return [{ tag: 'div[data-type="columns"]' }];
  },
  renderHTML() {
    return ['div', { 'data-type': 'columns', class: 'blk-columns' }, 0];
  },
});

/** The footer: a line of text (the sender's address, why the contact gets this) and the unsubscribe link, always. */
export const Footer = Node.create({
  name: 'footer',
  group: 'block',
  content: 'inline*',
  defining: true,
  isolating: true,
  parseHTML() {
    return [{ tag: 'footer[data-type="footer"]', contentElement: '.blk-footer-text' }];
  },
  renderHTML() {
    return [
      'footer',
      { 'data-type': 'footer', class: 'blk-footer' },
      ['div', { class: 'blk-footer-text' }, 0],
      ['div', { class: 'blk-footer-unsub', contenteditable: 'false' }, 'Unsubscribe'],
    ];
  },
});

/** A merge tag: `{{{name|fallback}}}` in the email, a chip in the editor. Typing the tag makes one. */
export const Placeholder = Node.create({
  name: 'placeholder',
  group: 'inline',
  inline: true,
  atom: true,
  selectable: true,
  addAttributes() {
    return { name: { default: 'contact.first_name' }, fallback: { default: '' } };
  },
  parseHTML() {
    return [
      { tag: 'span[data-type="placeholder"]', getAttrs: (el) => ({ name: el.getAttribute('data-name'), fallback: el.getAttribute('data-fallback') ?? '' }) },
    ];
  },
  renderHTML({ node }) {
    const { name, fallback } = node.attrs;
    return [
      'span',
      { 'data-type': 'placeholder', 'data-name': name, 'data-fallback': fallback, class: 'blk-ph' },
      `${name}${fallback ? ` | ${fallback}` : ''}`,
    ];
  },
  renderText({ node }) {
    return `{{{${node.attrs.name}${node.attrs.fallback ? `|${node.attrs.fallback}` : ''}}}}`;
  },
  addInputRules() {
    return [
      nodeInputRule({
        find: /\{\{\{([A-Za-z0-9_.]+)(?:\|([^{}|]*))?\}\}\}$/,
        type: this.type,
        getAttributes: (m) => ({ name: m[1], fallback: m[2] ?? '' }),
      }),
    ];
  },
});

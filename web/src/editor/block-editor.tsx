// The block editor (loaded on demand by lazy.tsx): TipTap 3 on ProseMirror, with StarterKit's
// Markdown shortcuts (`# `, `## `, `- `, `1. `, `> `, `---`, `**bold**`) and undo/redo, Image, and
// the nodes of nodes.ts. A `/` at the start of a word opens the command menu (blocks and
// placeholders); a selected button, image, spacer or placeholder shows its settings below the
// toolbar. Pasted HTML keeps only what the schema knows (ProseMirror's parser), its styles and
// classes dropped first.
import { Editor, Extension, type JSONContent } from '@tiptap/core';
import Image from '@tiptap/extension-image';
import { NodeSelection } from '@tiptap/pm/state';
import StarterKit from '@tiptap/starter-kit';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TargetedEvent } from 'preact';
import type { DocNode } from './email-html';
import { Button, Column, Columns, Footer, Placeholder, Spacer } from './nodes';
import { cleanPastedHtml } from './paste';

export interface PlaceholderChoice {
  name: string;
  label: string;
  fallback?: string;
}

export interface BlockEditorProps {
  doc: DocNode;
  onChange: (doc: DocNode) => void;
  placeholders: PlaceholderChoice[];
  label: string;
}

interface Command {
  id: string;
  label: string;
  hint: string;
  run: (e: Editor, range: { from: number; to: number } | null) => void;
}

const chainAt = (e: Editor, range: { from: number; to: number } | null) => {
  const c = e.chain().focus();
  return range ? c.deleteRange(range) : c;
};
const twoColumns: JSONContent = {
  type: 'columns',
  content: [
    { type: 'column', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Left column' }] }] },
    { type: 'column', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Right column' }] }] },
  ],
};

function blockCommands(placeholders: PlaceholderChoice[]): Command[] {
  return [
    { id: 'h1', label: 'Heading', hint: '# ', run: (e, r) => chainAt(e, r).setNode('heading', { level: 1 }).run() },
    { id: 'h2', label: 'Subheading', hint: '## ', run: (e, r) => chainAt(e, r).setNode('heading', { level: 2 }).run() },
    { id: 'text', label: 'Text', hint: 'paragraph', run: (e, r) => chainAt(e, r).setParagraph().run() },
    { id: 'bullets', label: 'Bulleted list', hint: '- ', run: (e, r) => chainAt(e, r).toggleBulletList().run() },
    { id: 'numbers', label: 'Numbered list', hint: '1. ', run: (e, r) => chainAt(e, r).toggleOrderedList().run() },
    {
      id: 'image',
      label: 'Image',
      hint: 'by URL',
      run: (e, r) =>
        chainAt(e, r)
          .insertContent({ type: 'image', attrs: { src: '', alt: '' } })
          .run(),
    },
    { id: 'button', label: 'Button', hint: 'a link as a button', run: (e, r) => chainAt(e, r).insertContent({ type: 'button' }).run() },
    { id: 'divider', label: 'Divider', hint: '---', run: (e, r) => chainAt(e, r).setHorizontalRule().run() },
    { id: 'columns', label: 'Two columns', hint: 'side by side', run: (e, r) => chainAt(e, r).insertContent(twoColumns).run() },
    { id: 'spacer', label: 'Spacer', hint: 'empty space', run: (e, r) => chainAt(e, r).insertContent({ type: 'spacer' }).run() },
    {
      id: 'footer',
      label: 'Footer',
      hint: 'with the unsubscribe link',
      run: (e, r) =>
        chainAt(e, r)
          .insertContent({ type: 'footer', content: [{ type: 'text', text: 'You receive this email because you subscribed.' }] })
          .run(),
    },
    ...placeholders.map(
      (p): Command => ({
        id: `ph:${p.name}`,
        label: p.label,
        hint: `{{{${p.name}}}}`,
        run: (e, r) =>
          chainAt(e, r)
            .insertContent({ type: 'placeholder', attrs: { name: p.name, fallback: p.fallback ?? '' } })
            .run(),
      }),
    ),
  ];
}

interface Slash {
  open: boolean;
  query: string;
  from: number;
  to: number;
  index: number;
  x: number;
  y: number;
}
const CLOSED: Slash = { open: false, query: '', from: 0, to: 0, index: 0, x: 0, y: 0 };

export function BlockEditor({ doc, onChange, placeholders, label }: BlockEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const [editor, setEditor] = useState<Editor | null>(null);
  const [, rerender] = useState(0);
  const [slash, setSlash] = useState<Slash>(CLOSED);
  // The menu's state for the keyboard shortcuts, which ProseMirror calls outside Preact's renders.
  const slashRef = useRef(slash);
  slashRef.current = slash;
  const commands = blockCommands(placeholders);
  const commandsRef = useRef(commands);
  commandsRef.current = commands;
  const changeRef = useRef(onChange);
  changeRef.current = onChange;

  const shown = (s: Slash) =>
    commandsRef.current.filter((c) => !s.query || c.label.toLowerCase().includes(s.query.toLowerCase()) || c.id.startsWith(s.query.toLowerCase()));

  useEffect(() => {
    const pick = (e: Editor) => {
      const s = slashRef.current;
      const c = shown(s)[s.index];
      setSlash(CLOSED);
      c?.run(e, { from: s.from, to: s.to });
    };
    const SlashKeys = Extension.create({
      name: 'slashKeys',
      addKeyboardShortcuts() {
        const when = (fn: () => void) => () => {
          if (!slashRef.current.open) return false;
          fn();
          return true;
        };
        const move = (d: number) => when(() => setSlash((s) => ({ ...s, index: (s.index + d + Math.max(1, shown(s).length)) % Math.max(1, shown(s).length) })));
        return {
          ArrowDown: move(1),
          ArrowUp: move(-1),
          Enter: when(() => pick(this.editor as Editor)),
          Tab: when(() => pick(this.editor as Editor)),
          Escape: when(() => setSlash(CLOSED)),
        };
      },
    });
    const e = new Editor({
      element: host.current!,
      extensions: [
        StarterKit.configure({ codeBlock: false, heading: { levels: [1, 2, 3] }, link: { openOnClick: false, autolink: true, defaultProtocol: 'https' } }),
        Image.configure({ inline: false }),
        Button,
        Spacer,
        Column,
        Columns,
        Footer,
        Placeholder,
        SlashKeys,
      ],
      content: doc as JSONContent,
      editorProps: {
        attributes: { role: 'textbox', 'aria-multiline': 'true', 'aria-label': label, class: 'blk-doc' },
        transformPastedHTML: cleanPastedHtml,
      },
      onUpdate: ({ editor: ed }) => changeRef.current(ed.getJSON() as DocNode),
      onTransaction: ({ editor: ed }) => {
        rerender((n) => n + 1);
        // The `/` menu: open while the text before the cursor ends in `/word` at a word's start.
        const { $from, empty } = ed.state.selection;
        const before = empty ? $from.parent.textBetween(0, $from.parentOffset, undefined, '\ufffc') : '';
        const m = /(?:^|\s)\/([\w ]{0,20})$/.exec(before);
        if (!m || !ed.isFocused) return setSlash((s) => (s.open ? CLOSED : s));
        const at = ed.view.coordsAtPos($from.pos);
        const box = host.current!.getBoundingClientRect();
        setSlash((s) => ({
          open: true,
          query: m[1]!.trim(),
          from: $from.pos - m[1]!.length - 1,
          to: $from.pos,
          index: s.open && s.query === m[1]!.trim() ? s.index : 0,
          x: Math.max(0, Math.min(at.left - box.left, box.width - 260)),
          y: at.bottom - box.top + 4,
        }));
      },
    });
    setEditor(e);
    return () => e.destroy();
  }, []);

  const list = slash.open ? shown(slash) : [];
  const sel = editor?.state.selection;
  const selected = sel instanceof NodeSelection ? sel.node : null;
  const can = editor?.can();
  return (
    <div class="blk">
      <div class="blk-toolbar" role="toolbar" aria-label="Editor">
        <button
          type="button"
          class="btn small ghost"
          aria-label="Undo"
          title="Undo (Ctrl+Z)"
          disabled={!can?.undo()}
          onClick={() => editor?.chain().focus().undo().run()}
        >
          ↶
        </button>
        <button
          type="button"
          class="btn small ghost"
          aria-label="Redo"
          title="Redo (Ctrl+Shift+Z)"
          disabled={!can?.redo()}
          onClick={() => editor?.chain().focus().redo().run()}
        >
          ↷
        </button>
        <span class="blk-sep" />
        <button
          type="button"
          class="btn small ghost"
          aria-label="Bold"
          aria-pressed={!!editor?.isActive('bold')}
          onClick={() => editor?.chain().focus().toggleBold().run()}
        >
          <strong>B</strong>
        </button>
        <button
          type="button"
          class="btn small ghost"
          aria-label="Italic"
          aria-pressed={!!editor?.isActive('italic')}
          onClick={() => editor?.chain().focus().toggleItalic().run()}
        >
          <em>I</em>
        </button>
        <LinkButton editor={editor} />
        <span class="blk-sep" />
        <label class="sr-only" for="blk-insert">
          Insert a block
        </label>
        <select
          id="blk-insert"
          class="blk-insert"
          value=""
          onChange={(ev) => {
            const c = commands.find((x) => x.id === ev.currentTarget.value);
            ev.currentTarget.value = '';
            if (editor && c) c.run(editor, null);
          }}
        >
          <option value="">+ Insert…</option>
          {commands.map((c) => (
            <option value={c.id}>{c.label}</option>
          ))}
        </select>
        <span class="muted small blk-tip">
          Type <kbd>/</kbd> for blocks and placeholders
        </span>
      </div>
      {editor && selected && <Settings editor={editor} node={selected} key={`${selected.type.name}-${sel!.from}`} />}
      <div class="blk-host" ref={host}>
        {slash.open && list.length > 0 && (
          <div class="blk-menu" role="listbox" aria-label="Insert" style={{ left: `${slash.x}px`, top: `${slash.y}px` }}>
            {list.map((c, i) => (
              <div
                role="option"
                tabIndex={-1}
                aria-selected={i === slash.index}
                class={i === slash.index ? 'blk-option active' : 'blk-option'}
                onMouseDown={(ev) => {
                  ev.preventDefault();
                  setSlash(CLOSED);
                  if (editor) c.run(editor, { from: slash.from, to: slash.to });
                }}
              >
                <span>{c.label}</span> <span class="muted small mono">{c.hint}</span>
              </div>
            ))}
          </div>
        )}
      </div>
    </div>
  );
}

function LinkButton({ editor }: { editor: Editor | null }) {
  const [open, setOpen] = useState(false);
  const [href, setHref] = useState('');
  const apply = () => {
    const c = editor?.chain().focus().extendMarkRange('link');
    if (href.trim()) c?.setLink({ href: href.trim() }).run();
    else c?.unsetLink().run();
    setOpen(false);
  };
  return (
    <span class="blk-link">
      <button
        type="button"
        class="btn small ghost"
        aria-label="Link"
        aria-expanded={open}
        aria-pressed={!!editor?.isActive('link')}
        onClick={() => {
          setHref(String(editor?.getAttributes('link').href ?? 'https://'));
          setOpen(!open);
        }}
      >
        Link
      </button>
      {open && (
        <span class="blk-link-form">
          <label class="sr-only" for="blk-href">
            Link address
          </label>
          <input
            id="blk-href"
            class="blk-link-input"
            value={href}
            onInput={(e) => setHref(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key !== 'Enter') return;
              e.preventDefault();
              apply();
            }}
          />
          <button type="button" class="btn small" onClick={apply}>
            Apply
          </button>
        </span>
      )}
    </span>
  );
}

type PmNode = NonNullable<ReturnType<Editor['state']['doc']['nodeAt']>>;

/**
 * One attribute of the selected atom as a field. What is typed is the field's own until it is
 * committed (the change event: Tab, Enter, leaving the field) and then applied as one undo step; a
 * render meanwhile (an autosave finishing, the page's record reloaded) keeps it rather than putting
 * the attribute's old value back.
 */
function AttrField({
  id,
  label,
  value,
  type = 'text',
  hint,
  apply,
}: {
  id: string;
  label: string;
  value: string;
  type?: 'text' | 'number';
  hint?: string;
  apply: (v: string) => void;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const own = {
    id,
    value: draft ?? value,
    onInput: (e: TargetedEvent<HTMLInputElement>) => setDraft(e.currentTarget.value),
    onChange: (e: TargetedEvent<HTMLInputElement>) => {
      setDraft(null);
      apply(e.currentTarget.value);
    },
  };
  return (
    <div class="blk-field">
      <label for={id}>{label}</label>
      {type === 'number' ? <input type="number" min={4} max={200} {...own} /> : <input type="text" placeholder={hint} {...own} />}
    </div>
  );
}

/** The settings of the selected atom: its attributes as fields, each applied when committed (one undo step each). */
function Settings({ editor, node }: { editor: Editor; node: PmNode }) {
  const type = node.type.name;
  const set = (attrs: Record<string, unknown>) => editor.chain().updateAttributes(type, attrs).setNodeSelection(editor.state.selection.from).run();
  const field = (key: string, label: string, opts: { type?: 'text' | 'number'; hint?: string } = {}) => (
    <AttrField
      key={`${type}-${key}`}
      id={`blk-${key}`}
      label={label}
      value={String(node.attrs[key] ?? '')}
      type={opts.type}
      hint={opts.hint}
      apply={(v) => set({ [key]: opts.type === 'number' ? Number(v) : v })}
    />
  );
  let fields = null;
  if (type === 'button')
    fields = (
      <>
        {field('label', 'Button text')}
        {field('href', 'Link', { hint: 'https://…' })}
        <div class="blk-field">
          <label for="blk-align">Align</label>
          <select id="blk-align" value={String(node.attrs.align)} onChange={(e) => set({ align: e.currentTarget.value })}>
            <option value="center">Centre</option>
            <option value="left">Left</option>
          </select>
        </div>
      </>
    );
  else if (type === 'image')
    fields = (
      <>
        {field('src', 'Image URL', { hint: 'https://…' })}
        {field('alt', 'Description (alt text)')}
      </>
    );
  else if (type === 'spacer') fields = field('height', 'Height (px)', { type: 'number' });
  else if (type === 'placeholder')
    fields = (
      <>
        {field('name', 'Placeholder')}
        {field('fallback', 'When empty')}
      </>
    );
  if (!fields) return null;
  return (
    <fieldset class="blk-settings">
      <legend class="blk-legend">{type === 'placeholder' ? 'Placeholder' : `${type[0]!.toUpperCase()}${type.slice(1)}`} settings</legend>
      {fields}
      <button type="button" class="btn small danger ghost" onClick={() => editor.chain().focus().deleteSelection().run()}>
        Remove
      </button>
    </fieldset>
  );
}

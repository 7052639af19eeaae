// The Blocks / Source tabs of an editor with blocks (broadcasts, templates), and what the Source tab
// says above the HTML: HTML made from blocks stops being blocks once edited by hand; HTML written by
// hand cannot become blocks (mode.ts), but can be started over with them.
import { Tabs } from '../ui';

export type ContentMode = 'blocks' | 'source';

/** The tabs; choosing Blocks with no document yet starts one (`onStartBlocks`). */
export function ContentModeTabs(p: { mode: ContentMode; hasDoc: boolean; setMode: (m: ContentMode) => void; onStartBlocks: () => void }) {
  return (
    <Tabs
      label="Content editor"
      current={p.mode}
      onChange={(m) => (m === 'blocks' && !p.hasDoc ? p.onStartBlocks() : p.setMode(m as ContentMode))}
      tabs={[
        { id: 'blocks', label: 'Blocks' },
        { id: 'source', label: 'Source' },
      ]}
    />
  );
}

export function SourceNotice({ fromBlocks, onStartBlocks }: { fromBlocks: boolean; onStartBlocks: () => void }) {
  return fromBlocks ? (
    <p class="callout small">This HTML is made from the blocks: edit it here and it becomes HTML written by hand, which cannot go back to blocks.</p>
  ) : (
    <p class="callout small">
      HTML written by hand cannot be turned into blocks.{' '}
      <button type="button" class="btn small" onClick={onStartBlocks}>
        Start over with blocks
      </button>
    </p>
  );
}

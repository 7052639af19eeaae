// What the Source tab of an editor with blocks says above the HTML (broadcasts, templates): HTML made
// from blocks stops being blocks once edited by hand; HTML written by hand cannot become blocks
// (mode.ts), but can be started over with them.
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

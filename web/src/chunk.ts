// A chunk of code a page loads with `import()` when first shown (the block editor, the automation
// builder: src/dashboard/bundle.ts splits them from the entry). Loaded once for the whole page,
// counted as the page's own work while it loads (api.ts `settling`: the live stream waits for it),
// and tried again by the next component that asks after a failure.
import { useEffect, useState } from 'preact/hooks';
import { settling } from './api';

export interface Chunk<M> {
  mod: M | null;
  error: Error | null;
}

/** A hook that gives the module `load` imports, once it has loaded, or the error it failed with. */
export function chunk<M>(load: () => Promise<M>): () => Chunk<M> {
  let loading: Promise<M> | null = null;
  return function useChunk(): Chunk<M> {
    const [state, setState] = useState<Chunk<M>>({ mod: null, error: null });
    useEffect(() => {
      loading ??= settling(load());
      loading.then(
        (mod) => setState({ mod, error: null }),
        (error: Error) => {
          loading = null;
          setState({ mod: null, error });
        },
      );
    }, []);
    return state;
  };
}

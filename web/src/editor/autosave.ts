// Autosave of a draft: `value` saved by `save` a moment after its last change (one PATCH per pause
// in typing, through the same REST API as the Save button), with the state to show and a flush()
// for actions that need the draft saved now (a test send, the send).
import { useEffect, useRef, useState } from 'preact/hooks';

export type SaveState = 'saved' | 'unsaved' | 'saving' | 'failed';

export function useAutosave<T>(value: T, save: (v: T) => Promise<void>, delayMs = 1200) {
  const [state, setState] = useState<SaveState>('saved');
  const [error, setError] = useState<Error | null>(null);
  const saved = useRef(JSON.stringify(value));
  const latest = useRef(value);
  latest.current = value;
  const running = useRef<Promise<void> | null>(null);

  const flush = async (): Promise<void> => {
    // One save at a time; a change made while one runs is saved after it.
    while (running.current) await running.current.catch(() => {});
    const v = latest.current;
    const text = JSON.stringify(v);
    if (text === saved.current) return setState('saved');
    setState('saving');
    running.current = save(v).then(
      () => {
        saved.current = text;
        setError(null);
        setState(JSON.stringify(latest.current) === text ? 'saved' : 'unsaved');
      },
      (e: Error) => {
        setError(e);
        setState('failed');
        throw e;
      },
    );
    try {
      await running.current;
    } finally {
      running.current = null;
    }
  };

  const text = JSON.stringify(value);
  useEffect(() => {
    if (text === saved.current) return;
    setState('unsaved');
    const t = setTimeout(() => void flush().catch(() => {}), delayMs);
    return () => clearTimeout(t);
  }, [text]);

  return { state, error, flush, dirty: state !== 'saved' };
}

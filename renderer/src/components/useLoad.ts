/** Load data for a page: loading / ready / error, with a reload, cancelled on unmount or change. */
import { useCallback, useEffect, useEffectEvent, useState } from 'react';
import type { ErrorPayload } from '../../../models/errors';
import { CallError } from '../bridge';

/** Window event fired when records changed outside the page (pages reload their data). */
export const DATA_CHANGED = 'ai:data-changed';

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'ready'; data: T; error?: undefined }
  | { state: 'error'; data?: undefined; error: ErrorPayload };

/**
 * Run `fn` when `key` changes (or on reload); the result drives the page's `data-state`.
 * The loaded result remembers which key and reload it belongs to, so a change of key reads as
 * "loading" straight away without a state update inside the effect.
 */
export function useLoad<T>(fn: () => Promise<T>, key: string): Loaded<T> & { reload(): void } {
  const [n, setN] = useState(0);
  const current = `${n}:${key}`;
  const [result, setResult] = useState<{ for: string; loaded: Loaded<T> } | null>(null);
  // The latest `fn` without making it an effect dependency (pages pass a new closure each render).
  const load = useEffectEvent(fn);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setResult({ for: current, loaded: { state: 'ready', data } }),
      (e: unknown) =>
        live &&
        setResult({
          for: current,
          loaded: {
            state: 'error',
            error: e instanceof CallError ? e.payload : { code: 'Internal', message: e instanceof Error ? e.message : 'Failed to load.' },
          },
        }),
    );
    return () => {
      live = false;
    };
  }, [current]);
  const reload = useCallback(() => setN((x) => x + 1), []);
  // Data changed elsewhere (an approved assistant change, an Undo): load again.
  useEffect(() => {
    window.addEventListener(DATA_CHANGED, reload);
    return () => window.removeEventListener(DATA_CHANGED, reload);
  }, [reload]);
  const state: Loaded<T> = result && result.for === current ? result.loaded : { state: 'loading' };
  return { ...state, reload };
}

/** Load data for a page: loading / ready / error, with a reload, cancelled on unmount or change. */
import { useCallback, useEffect, useState } from 'react';
import type { ErrorPayload } from '../../../models/errors';
import { CallError } from '../bridge';

/** Window event fired when records changed outside the page (pages reload their data). */
export const DATA_CHANGED = 'ai:data-changed';

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'ready'; data: T; error?: undefined }
  | { state: 'error'; data?: undefined; error: ErrorPayload };

/** Run `fn` when `key` changes; the result drives the page's `data-state`. */
export function useLoad<T>(fn: () => Promise<T>, key: string): Loaded<T> & { reload(): void } {
  const [state, setState] = useState<Loaded<T>>({ state: 'loading' });
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setState({ state: 'loading' });
    fn().then(
      (data) => live && setState({ state: 'ready', data }),
      (e: unknown) => live && setState({ state: 'error', error: e instanceof CallError ? e.payload : { code: 'Internal', message: e instanceof Error ? e.message : 'Failed to load.' } }),
    );
    return () => {
      live = false;
    };
  }, [key, n]);
  const reload = useCallback(() => setN((x) => x + 1), []);
  // Data changed elsewhere (an approved assistant change, an Undo): load again.
  useEffect(() => {
    window.addEventListener(DATA_CHANGED, reload);
    return () => window.removeEventListener(DATA_CHANGED, reload);
  }, [reload]);
  return { ...state, reload };
}

/**
 * Preload: exposes exactly the renderer↔main contract (models/contract.ts) as
 * `window.athleteIntelligence`, through contextBridge, and nothing else — no ipcRenderer, no Node.
 * Sandboxed preloads cannot load npm modules, so this file imports types only from models/.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { ContractBridge, OpName } from '../models/contract';

/** The contract's operations (a missing or extra name fails the type check below). */
const OPS = ['session.users', 'session.signIn', 'session.people', 'session.signOut', 'session.me', 'verb.call'] as const satisfies readonly OpName[];
type Exhaustive<T extends true> = T;
export type PreloadCoversContract = Exhaustive<OpName extends (typeof OPS)[number] ? true : false>;

/** IPC channel of contract calls (main/electron/index.ts handles it). */
const CHANNEL = 'contract:call';
const allowed = new Set<string>(OPS);

const bridge: ContractBridge = {
  call: (op, input) => {
    if (!allowed.has(op)) return Promise.resolve({ ok: false, error: { code: 'NotFound', message: `Operation "${String(op)}" was not found.` } });
    return ipcRenderer.invoke(CHANNEL, op, input);
  },
};

contextBridge.exposeInMainWorld('athleteIntelligence', Object.freeze(bridge));

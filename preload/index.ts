/**
 * Preload: exposes exactly the renderer↔main contract (models/contract.ts) as
 * `window.athleteIntelligence`, through contextBridge, and nothing else — no ipcRenderer, no Node.
 * Sandboxed preloads cannot load npm modules, so this file imports types only from models/.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { IpcRendererEvent } from 'electron';
import type { ContractBridge, OpName, StreamName } from '../models/contract';
import type { ErrorPayload } from '../models/errors';

/** The contract's operations (a missing or extra name fails the type check below). */
const OPS = [
  'session.users',
  'session.signIn',
  'session.people',
  'session.signOut',
  'session.me',
  'verb.call',
  'assistant.start',
  'assistant.confirm',
  'assistant.stop',
  'assistant.trace',
  'settings.assistant',
  'settings.updateAssistant',
  'proposals.list',
  'proposals.approve',
  'proposals.decline',
  'proposals.narrow',
  'forms.submit',
  'capture.recordings',
  'capture.importTrial',
  'capture.process',
  'capture.job',
  'capture.cancel',
  'capture.sources',
  'capture.openRig',
  'capture.closeRig',
  'capture.preview',
  'capture.rigStatus',
  'capture.startRecording',
  'capture.stopRecording',
  'capture.calibStart',
  'capture.calibState',
  'capture.calibFrame',
  'capture.calibSet',
  'capture.calibCapture',
  'capture.calibRetake',
  'capture.calibIntrinsics',
  'capture.calibExtrinsics',
  'capture.calibImport',
  'capture.calibLayout',
  'capture.calibSave',
  'capture.calibClose',
  'capture.tapFrame',
  'capture.tap',
  'sync.status',
  'sync.enrol',
  'sync.now',
  'sync.conflicts',
  'sync.discard',
  'sync.hqSignIn',
  'sync.signInToHq',
  'sync.enrolmentCode',
  'admin.setPin',
  'settings.organisation',
  'settings.updateOrganisation',
] as const satisfies readonly OpName[];
/** The contract's streams. */
const STREAMS = ['assistant.events', 'sync.events'] as const satisfies readonly StreamName[];
type Exhaustive<T extends true> = T;
export type PreloadCoversContract = [
  Exhaustive<OpName extends (typeof OPS)[number] ? true : false>,
  Exhaustive<StreamName extends (typeof STREAMS)[number] ? true : false>,
];

/** IPC channels (main/electron/index.ts handles them). */
const CHANNEL = 'contract:call';
const SUBSCRIBE = 'contract:subscribe';
const UNSUBSCRIBE = 'contract:unsubscribe';
const EVENT = 'contract:event';
const END = 'contract:end';
const allowed = new Set<string>(OPS);
const allowedStreams = new Set<string>(STREAMS);

const bridge: ContractBridge = {
  call: (op, input) => {
    if (!allowed.has(op)) return Promise.resolve({ ok: false, error: { code: 'NotFound', message: `Operation "${String(op)}" was not found.` } });
    return ipcRenderer.invoke(CHANNEL, op, input);
  },
  subscribe: (stream, input, onEvent, onEnd) => {
    if (!allowedStreams.has(stream)) {
      onEnd({ code: 'NotFound', message: `Stream "${String(stream)}" was not found.` });
      return () => {};
    }
    const id = globalThis.crypto.randomUUID();
    let ended = false;
    const onEv = (_e: IpcRendererEvent, sub: string, env: unknown) => {
      if (sub === id && !ended) onEvent(env as Parameters<typeof onEvent>[0]);
    };
    const finish = (error?: ErrorPayload) => {
      if (ended) return;
      ended = true;
      ipcRenderer.off(EVENT, onEv);
      ipcRenderer.off(END, onEndMsg);
      onEnd(error);
    };
    const onEndMsg = (_e: IpcRendererEvent, sub: string, error: ErrorPayload | null) => {
      if (sub === id) finish(error ?? undefined);
    };
    ipcRenderer.on(EVENT, onEv);
    ipcRenderer.on(END, onEndMsg);
    void ipcRenderer.invoke(SUBSCRIBE, id, stream, input).then((r: { ok: boolean; error?: ErrorPayload }) => {
      if (!r.ok) finish(r.error);
    });
    return () => {
      if (ended) return;
      finish();
      void ipcRenderer.invoke(UNSUBSCRIBE, id);
    };
  },
};

contextBridge.exposeInMainWorld('athleteIntelligence', Object.freeze(bridge));

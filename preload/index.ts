/** Preload: exposes the typed renderer↔main contract through contextBridge, nothing else. */
import { contextBridge, ipcRenderer } from 'electron';

contextBridge.exposeInMainWorld('athleteIntelligence', {
  invoke: (verb: string, input: unknown) => ipcRenderer.invoke('contract:invoke', verb, input),
});

/**
 * Electron main entry: one window with context isolation, a sandboxed renderer, no Node in it, a
 * strict CSP, navigation pinned to the app, and external links opened in the system browser.
 * The renderer reaches the main process only through the contract (models/contract.ts), whose
 * handlers (main/ipc/handlers.ts) are registered here on one IPC channel; each window has its own
 * sign-in session.
 */
import { app, BrowserWindow, ipcMain, session, shell } from 'electron';
import type { IpcMainInvokeEvent } from 'electron';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Db } from '../data/db';
import { CSP } from '../host/csp';
import { openAppDatabase } from '../app/bootstrap';
import { startAppSync } from '../app/device-sync';
import type { AppSync } from '../app/sync-runner';
import type { WindowSession } from '../ipc/handlers';
import { createHandlers, createStreamHandlers, dispatch, openStream } from '../ipc/handlers';
import { createCaptureWorkspace } from '../ipc/capture';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { Kinetix } from '../kinetix/harness';

const here = dirname(fileURLToPath(import.meta.url));
const rendererIndex = join(here, '../renderer/index.html');
const rendererRoot = pathToFileURL(join(here, '../renderer/')).href;
/** IPC channels of the contract (preload/index.ts uses the same names). */
const CHANNEL = 'contract:call';
const SUBSCRIBE = 'contract:subscribe';
const UNSUBSCRIBE = 'contract:unsubscribe';
const EVENT = 'contract:event';
const END = 'contract:end';

/** Per-window sign-in state, keyed by webContents id. */
const sessions = new Map<number, WindowSession>();

function isAppUrl(url: string): boolean {
  return url.startsWith(rendererRoot);
}

function openExternalSafely(url: string): void {
  if (/^https:\/\//i.test(url) || /^mailto:/i.test(url)) void shell.openExternal(url);
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 1024,
    minHeight: 700,
    title: 'Athlete Intelligence',
    webPreferences: {
      preload: join(here, '../preload/index.cjs'),
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
      webSecurity: true,
      spellcheck: false,
    },
  });
  const id = win.webContents.id;
  sessions.set(id, { userId: null });
  win.on('closed', () => sessions.delete(id));
  win.webContents.setWindowOpenHandler(({ url }) => {
    openExternalSafely(url);
    return { action: 'deny' };
  });
  win.webContents.on('will-navigate', (e, url) => {
    if (!isAppUrl(url)) {
      e.preventDefault();
      openExternalSafely(url);
    }
  });
  void win.loadFile(rendererIndex);
  return win;
}

const refused = { ok: false, error: { code: 'Forbidden', message: 'Calls are accepted only from the app window.' } } as const;

function registerContract(db: Db, sync: AppSync, captureDir: string): void {
  const log = (l: string) => console.log(`ipc: ${l}`);
  const tools = defaultToolRegistry();
  const kinetix = Kinetix.open({ db, tools, log: (l) => console.log(`kinetix: ${l}`) });
  const capture = createCaptureWorkspace(db, captureDir, log);
  app.on('will-quit', () => capture.close());
  const deps = { db, log, kinetix, tools, sync, capture };
  const handlers = createHandlers(deps);
  const streams = createStreamHandlers(deps);
  const open = new Map<string, { cancel(): void }>();
  // Only our own page, in a window we created, may call.
  const sessionOf = (event: IpcMainInvokeEvent): WindowSession | null => {
    const s = sessions.get(event.sender.id);
    return s && isAppUrl(event.senderFrame?.url ?? '') ? s : null;
  };
  ipcMain.handle(CHANNEL, (event: IpcMainInvokeEvent, op: unknown, input: unknown) => {
    const s = sessionOf(event);
    if (!s) return refused;
    return dispatch(handlers, { session: s }, op, input, log);
  });
  ipcMain.handle(SUBSCRIBE, (event: IpcMainInvokeEvent, subId: unknown, stream: unknown, input: unknown) => {
    const s = sessionOf(event);
    if (!s) return refused;
    if (typeof subId !== 'string' || subId.length > 100 || open.has(subId))
      return { ok: false, error: { code: 'Validation', message: 'Invalid subscription id.' } };
    const opened = openStream(streams, { session: s }, stream, input);
    if (!opened.ok) return opened;
    const it = opened.events[Symbol.asyncIterator]();
    const sender = event.sender;
    let cancelled = false;
    open.set(subId, {
      cancel: () => {
        cancelled = true;
        void it.return?.();
      },
    });
    sender.once('destroyed', () => open.get(subId)?.cancel());
    void (async () => {
      try {
        for (;;) {
          const next = await it.next();
          if (next.done || cancelled || sender.isDestroyed()) break;
          sender.send(EVENT, subId, next.value);
        }
        if (!sender.isDestroyed()) sender.send(END, subId, null);
      } catch {
        if (!sender.isDestroyed()) sender.send(END, subId, { code: 'Internal', message: 'The event stream failed; reconnect to resume from the last event.' });
      } finally {
        open.delete(subId);
      }
    })();
    return { ok: true };
  });
  ipcMain.handle(UNSUBSCRIBE, (_event: IpcMainInvokeEvent, subId: unknown) => {
    if (typeof subId === 'string') open.get(subId)?.cancel();
    return { ok: true };
  });
}

app.whenReady().then(() => {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CSP] } });
  });
  // Nothing but camera/microphone access (capture previews) for our own page; everything else is refused.
  session.defaultSession.setPermissionRequestHandler((wc, permission, callback) => callback(permission === 'media' && isAppUrl(wc.getURL())));
  const db = openAppDatabase(undefined, { userDataDir: app.getPath('userData') });
  // Device sync runs in the background when this database is enrolled with an HQ server.
  const sync = startAppSync(db, (l) => console.log(`sync: ${l}`));
  registerContract(db, sync, process.env.ATHLETE_CAPTURE_DIR ?? join(app.getPath('userData'), 'captures'));
  createWindow();
  // Stop syncing (live shape requests, the uploader) before the database closes.
  let quitting = false;
  app.on('before-quit', (e) => {
    if (quitting) return;
    quitting = true;
    e.preventDefault();
    void sync.close().finally(() => {
      db.close();
      app.quit();
    });
  });
});
app.on('window-all-closed', () => app.quit());
app.on('web-contents-created', (_e, contents) => {
  contents.on('will-attach-webview', (e) => e.preventDefault());
});

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
import type { WindowSession } from '../ipc/handlers';
import { createHandlers, dispatch } from '../ipc/handlers';

const here = dirname(fileURLToPath(import.meta.url));
const rendererIndex = join(here, '../renderer/index.html');
const rendererRoot = pathToFileURL(join(here, '../renderer/')).href;
/** The IPC channel of contract calls (preload/index.ts invokes it). */
const CHANNEL = 'contract:call';

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

function registerContract(db: Db): void {
  const handlers = createHandlers({ db, log: (l) => console.log(`ipc: ${l}`) });
  ipcMain.handle(CHANNEL, (event: IpcMainInvokeEvent, op: unknown, input: unknown) => {
    // Only our own page, in a window we created, may call.
    const frameUrl = event.senderFrame?.url ?? '';
    const s = sessions.get(event.sender.id);
    if (!s || !isAppUrl(frameUrl)) return { ok: false, error: { code: 'Forbidden', message: 'Calls are accepted only from the app window.' } };
    return dispatch(handlers, { session: s }, op, input, (l) => console.log(`ipc: ${l}`));
  });
}

app.whenReady().then(() => {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CSP] } });
  });
  // Nothing but camera/microphone access (capture previews) for our own page; everything else is refused.
  session.defaultSession.setPermissionRequestHandler((wc, permission, callback) => callback(permission === 'media' && isAppUrl(wc.getURL())));
  const db = openAppDatabase(undefined, { userDataDir: app.getPath('userData') });
  registerContract(db);
  createWindow();
  app.on('before-quit', () => db.close());
});
app.on('window-all-closed', () => app.quit());
app.on('web-contents-created', (_e, contents) => {
  contents.on('will-attach-webview', (e) => e.preventDefault());
});

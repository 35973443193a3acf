import { resolve } from 'node:path';
import { defineConfig, externalizeDepsPlugin } from 'electron-vite';
import react from '@vitejs/plugin-react';

/**
 * Builds the three Electron bundles: main (Node), preload (contextBridge only) and the
 * React renderer. The same renderer bundle is what the web host serves (main/host/web.ts).
 */
export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin()],
    // shape-worker: device sync's shape streams run in a worker thread (main/sync/shape-feed.ts finds shape-worker.js next to index.js).
    build: {
      outDir: 'out/main',
      rollupOptions: { input: { index: resolve(__dirname, 'main/electron/index.ts'), 'shape-worker': resolve(__dirname, 'main/sync/shape-worker.ts') } },
    },
  },
  preload: {
    plugins: [externalizeDepsPlugin()],
    // Sandboxed preloads must be CommonJS.
    build: {
      outDir: 'out/preload',
      rollupOptions: { input: { index: resolve(__dirname, 'preload/index.ts') }, output: { format: 'cjs', entryFileNames: '[name].cjs' } },
    },
  },
  renderer: {
    root: resolve(__dirname, 'renderer'),
    plugins: [react()],
    build: { outDir: resolve(__dirname, 'out/renderer'), minify: true, rollupOptions: { input: { index: resolve(__dirname, 'renderer/index.html') } } },
  },
});

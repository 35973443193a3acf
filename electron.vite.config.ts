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
    build: { outDir: 'out/main', rollupOptions: { input: { index: resolve(__dirname, 'main/electron/index.ts') } } },
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

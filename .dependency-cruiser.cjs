/**
 * Import directions from shared/design/architecture.md ("Top-level layout").
 * Run by `npm run lint` (part of `npm test`, so CI fails on a crossing).
 */
const NODE_OR_RUNTIME = '^(electron|react|react-dom|zustand|better-sqlite3|pg|onnxruntime-node|@u4/opencv4nodejs|@anthropic-ai/sdk|@modelcontextprotocol/sdk|playwright-core)($|/)';

module.exports = {
  forbidden: [
    {
      name: 'models-is-runtime-agnostic',
      comment: 'models/ imports only models/ and pure libraries: no node:*, electron, DOM, React, database drivers.',
      severity: 'error',
      from: { path: '^models/' },
      to: { pathNot: '^models/|^node_modules/(zod|@ag-ui/core|uuidv7)/' },
    },
    {
      name: 'models-no-node-builtins',
      severity: 'error',
      from: { path: '^models/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'renderer-only-renderer-and-models',
      comment: 'renderer/ never imports main/, preload/, sync/ or Node.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^(main|preload|sync|native|e2e)/' },
    },
    {
      name: 'renderer-no-node',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'renderer-no-main-runtime-libs',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^node_modules/(electron|better-sqlite3|pg|onnxruntime-node|@anthropic-ai/sdk|@modelcontextprotocol/sdk)/' },
    },
    {
      name: 'preload-only-contract',
      comment: 'preload/ exposes the contract from models/ via contextBridge, nothing else.',
      severity: 'error',
      from: { path: '^preload/' },
      to: { pathNot: '^(preload|models)/|^node_modules/(electron|zod)/', dependencyTypes: ['local', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'core'] },
    },
    {
      name: 'main-not-ui',
      severity: 'error',
      from: { path: '^main/' },
      to: { path: '^(renderer|preload|e2e|sync)/' },
    },
    {
      name: 'sqlite-only-in-data-layer',
      comment: 'better-sqlite3 is owned by main/data/ (no SQL outside the data layer).',
      severity: 'error',
      from: { pathNot: '^main/data/' },
      to: { path: '^node_modules/better-sqlite3/' },
    },
    {
      name: 'data-layer-is-the-bottom',
      comment: 'main/data/ knows nothing of services, kinetix, capture or hosts.',
      severity: 'error',
      from: { path: '^main/data/' },
      to: { path: '^main/(services|kinetix|capture|host|cli|ipc|sync|mcp|help)/' },
    },
    {
      name: 'services-below-kinetix',
      comment: 'services never import the assistant harness (kinetix sits above services).',
      severity: 'error',
      from: { path: '^main/services/' },
      to: { path: '^main/(kinetix|host|cli|ipc|mcp)/' },
    },
    {
      name: 'native-addons-loaded-in-one-place',
      comment: 'native/ addons load only from main/capture/native/.',
      severity: 'error',
      from: { pathNot: '^(main/capture/native/|native/)' },
      to: { path: '^native/' },
    },
    {
      name: 'sync-server-not-desktop',
      comment: 'sync/ (HQ server) imports sync/ and models/ only.',
      severity: 'error',
      from: { path: '^sync/', pathNot: '^sync/.*\\.test\\.ts$' },
      to: { path: '^(main|renderer|preload|e2e|native)/' },
    },
    {
      name: 'sync-tests-compare-with-device-data-layer-only',
      comment: 'sync/ tests may open the device data layer (main/data/: its migrations and seed) to compare the HQ schema and seed with it; nothing else of main/.',
      severity: 'error',
      from: { path: '^sync/.*\\.test\\.ts$' },
      to: { path: '^(main|renderer|preload|e2e|native)/', pathNot: '^main/data/' },
    },
    {
      name: 'pg-only-on-hq-side',
      severity: 'error',
      from: { pathNot: '^(sync|main/sync)/' },
      to: { path: '^node_modules/pg/' },
    },
    {
      name: 'e2e-black-box',
      severity: 'error',
      comment: 'e2e drives the app from outside; it may reuse test fixtures in main/testing/ only.',
      from: { path: '^e2e/' },
      to: { path: '^(main|renderer|preload|sync|native)/', pathNot: '^main/testing/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Worktrees share node_modules through a symlink; resolve it as ./node_modules, not its target.
    preserveSymlinks: true,
    exclude: { path: '(^|/)(out|dist|build)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], mainFields: ['module', 'main', 'types', 'typings'] },
  },
};

/**
 * Import directions from shared/design/architecture.md ("Top-level layout").
 * Run by `npm run lint` (part of `npm test`, so CI fails on a crossing).
 */

/*
 * Who may import the data layer (main/data/). The rule of the design is "no SQL outside main/data/,
 * and data access through the service layer" (shared/design/architecture.md): pages, the
 * assistant, the CLI and MCP call service verbs. These are the documented exceptions, each with
 * its reason. Anything else importing main/data/ fails `npm run lint`.
 */
const DATA_ADAPTERS = [
  // The handle itself: opening the file, passing `Db` down, one transaction around service calls.
  // A `Db` carries no connection (SQL is reached only through main/data/sqlite.ts, rule
  // `sql-connection-only-in-data-layer`), so importing db.ts gives no way to run SQL.
  { from: '^main/', to: '^main/data/db\\.ts$', why: 'the database handle (openDb, Db, inTransaction) is composition, not data access' },
  // Identity before there is an actor: sign-in, the CLI's --as email, an MCP token's user. A
  // service context needs an actor, so resolving who is calling sits below the services.
  {
    from: '^main/(host|ipc|cli|mcp|capture|app|electron|sync)/',
    to: '^main/data/identity\\.ts$',
    why: 'resolving the caller (sign-in, --as, token) comes before a service context exists',
  },
  // Composition roots that create and seed a database (first start, `cli seed`, `web --seed-large`).
  { from: '^main/(app/bootstrap|host/web|cli/index)\\.ts$', to: '^main/data/seed\\.ts$', why: 'creating the demo or benchmark database on first start' },
  // The assistant harness owns its own tables (kinetix.md §2–8: runs, events, usage, audit rows,
  // proposals) and the org's assistant settings; approved proposals are applied through the one
  // changeset writer that the services use too.
  {
    from: '^main/kinetix/',
    to: '^main/data/(kinetix|proposals|changesets|identity)\\.ts$',
    why: "the harness's own run/audit/proposal tables and assistant settings",
  },
  // Device sync (main/sync/) owns its state tables and writes the replica: shape rows with their
  // offsets, upload outcomes, optimistic rows (shared/design/sync.md). Not a verb: it is the
  // transport below every verb, applying what HQ already authorised.
  { from: '^main/sync/', to: '^main/data/sync\\.ts$', why: "the sync engine's own state tables and the replica writes of shapes" },
  // MCP client tokens are the MCP adapter's own credential table.
  { from: '^main/mcp/tokens\\.ts$', to: '^main/data/mcp\\.ts$', why: "the MCP adapter's own token table" },
];

// Verification tools inspect the database to judge outcomes (tests, fixtures, the eval and
// benchmarks): they may import any of main/data/, the SQLite connection included.
const VERIFICATION = '\\.test\\.ts$|^main/(testing|eval|bench)/|^main/kinetix/bench/';

// Core modules by name (dependency-cruiser resolves `node:fs` to `fs`).
const core = (names) => `^(node:)?(${names.join('|')})$`;

/*
 * The data-access rule as named `forbidden` rules (a crossing prints its rule name and reason,
 * not an anonymous "not-in-allowed"): a main/data/ module named by an adapter above may be
 * imported by main/data/, main/services/, the verification tools and that adapter's importers;
 * any other main/data/ module by main/data/, main/services/ and the verification tools only.
 */
const DATA_ACCESS_COMMENT =
  'Data access goes through a service verb: only main/data/, main/services/, the verification tools and the documented adapters (DATA_ADAPTERS in .dependency-cruiser.cjs, each with its reason) may import main/data/. Call the verb instead, or document a new adapter with its reason.';
const DATA_BASE_IMPORTERS = `^main/(data|services)/|${VERIFICATION}`;
// Per module of main/data/ (read from disk, so a new module is covered at once): the adapters
// whose target matches it. A module matched by several adapters allows all their importers.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config file
const { readdirSync } = require('node:fs');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config file
const { join, sep } = require('node:path');
const DATA_MODULES = readdirSync(join(__dirname, 'main/data'), { recursive: true })
  .map((f) => `main/data/${String(f).split(sep).join('/')}`)
  .filter((f) => /\.ts$/.test(f) && !/\.test\.ts$/.test(f));
const escapeRe = (x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const DATA_ACCESS_RULES = DATA_MODULES.map((mod) => {
  const adapters = DATA_ADAPTERS.filter((a) => new RegExp(a.to).test(mod));
  return {
    name: 'data-access-via-services',
    comment: adapters.length ? `${DATA_ACCESS_COMMENT} Documented importers of ${mod}: ${adapters.map((a) => a.why).join('; ')}.` : DATA_ACCESS_COMMENT,
    severity: 'error',
    from: { path: '^main/', pathNot: [DATA_BASE_IMPORTERS, ...adapters.map((a) => a.from)].join('|') },
    to: { path: `^${escapeRe(mod)}$` },
  };
});

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
      to: { path: '^(renderer|preload|e2e)/' },
    },
    {
      name: 'main-not-hq-server',
      comment:
        'main/ never imports the HQ server (sync/); only the device-sync tests, their fixture and benchmark (main/sync/testing/, main/sync/*.test.ts, main/bench/sync*) start it as the real counterpart.',
      severity: 'error',
      from: { path: '^main/', pathNot: '^main/sync/(testing/|.*\\.test\\.ts$)|^main/bench/sync' },
      to: { path: '^sync/' },
    },
    {
      name: 'sqlite-only-in-data-layer',
      comment: 'better-sqlite3 is owned by main/data/ (no SQL outside the data layer).',
      severity: 'error',
      from: { pathNot: '^main/data/' },
      to: { path: '^node_modules/better-sqlite3/' },
    },
    {
      name: 'sql-connection-only-in-data-layer',
      comment:
        'The SQLite connection (sqlite(db), main/data/sqlite.ts) is reached only inside main/data/ and by the verification tools: code above the data layer holds a Db handle, which runs no SQL. Add a function to main/data/ (called from a service verb) instead.',
      severity: 'error',
      from: { pathNot: `^main/data/|${VERIFICATION}` },
      to: { path: '^main/data/sqlite\\.ts$' },
    },
    {
      name: 'data-layer-is-the-bottom',
      comment:
        'main/data/ imports only main/data/, models/, the PIN hasher main/security/pin.ts (a leaf: node:crypto only), better-sqlite3 and the named node modules (crypto, fs, path, readline). Allow-list: anything else is a crossing.',
      severity: 'error',
      from: { path: '^main/data/', pathNot: '\\.test\\.ts$' },
      to: { pathNot: `^(main/data/|models/|main/security/pin\\.ts$|node_modules/better-sqlite3/)|${core(['crypto', 'fs', 'path', 'readline'])}` },
    },
    {
      name: 'services-below-kinetix',
      comment:
        'main/services/ imports only main/services/, main/data/, models/, main/security/ and main/help/ (two leaves below it), zod, uuidv7 and node:crypto. Allow-list: never the harness (main/kinetix/), a transport or entry point (host, ipc, cli, mcp, electron, app), device sync (main/sync/) or capture.',
      severity: 'error',
      from: { path: '^main/services/', pathNot: '\\.test\\.ts$' },
      to: { pathNot: `^(main/(services|data|security|help)/|models/|node_modules/(zod|uuidv7)/)|${core(['crypto'])}` },
    },
    {
      name: 'security-and-help-are-leaves',
      comment:
        'main/security/ (PIN and secret hashing, the sealed secret box) and main/help/ (help pages and their parser) sit below the services and the data layer: they import only themselves, models/ and named node modules.',
      severity: 'error',
      from: { path: '^main/(security|help)/', pathNot: '\\.test\\.ts$|^main/help/(build|generate)\\.ts$' },
      to: { pathNot: `^(main/security/|main/help/|models/)|${core(['crypto', 'fs', 'path', 'url'])}` },
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
      comment:
        'sync/ tests may open the device data layer (main/data/: its migrations and seed) to compare the HQ schema and seed with it; nothing else of main/.',
      severity: 'error',
      from: { path: '^sync/.*\\.test\\.ts$' },
      to: { path: '^(main|renderer|preload|e2e|native)/', pathNot: '^main/data/' },
    },
    {
      name: 'pg-only-on-hq-side',
      severity: 'error',
      from: { pathNot: '^(sync|main/sync)/|^main/bench/sync' },
      to: { path: '^node_modules/pg/' },
    },
    {
      name: 'e2e-black-box',
      severity: 'error',
      comment:
        'e2e drives the app from outside (a browser against the real web host): it imports e2e/, the shapes in models/, the scripted model server (main/testing/scripted-anthropic.ts) and the benchmark report writer (main/bench/report.ts) only, never app code or the database.',
      from: { path: '^e2e/' },
      to: { path: '^(main|renderer|preload|sync|native)/', pathNot: '^main/testing/scripted-anthropic\\.ts$|^main/bench/report\\.ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import cycles at run time: a cycle means two modules are one module, and it breaks one-way layering. Type-only imports (erased by the compiler) do not count.',
      from: {},
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    ...DATA_ACCESS_RULES,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Worktrees share node_modules through a symlink; resolve it as ./node_modules, not its target.
    preserveSymlinks: true,
    exclude: { path: '(^|/)(out|dist|build)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};

/**
 * Child-process script for native-errors.test.ts: runs one bad call against the OpenCV or
 * triangulation addon and prints `{"ok":…}` or `{"error":{name,code,cvCode,message}}` as JSON.
 * Run in a child so that, were the addon to abort (uncaught C++ exception, segfault), the test
 * sees a non-zero exit instead of vitest dying with it.
 */
import { openCvAddon, triangulationAddon } from '../index';

const K = Float64Array.of(1000, 0, 320, 0, 1000, 240, 0, 0, 1);
const grid = (n: number) => Float64Array.from({ length: n * 3 }, (_, i) => (i % 3 === 2 ? 0 : Math.floor(i / 3) * 0.05));
const pix = (n: number) => Float64Array.from({ length: n * 2 }, (_, i) => 100 + i * 7);

const cases: Record<string, () => unknown> = {
  board2x7: () => openCvAddon().findChessboard({ data: new Uint8Array(64 * 48), width: 64, height: 48, channels: 1 }, 2, 7),
  dist6: () => openCvAddon().solvePnP(grid(6), pix(6), K, new Float64Array(6)),
  calib3pts: () => openCvAddon().calibrateCamera([grid(3), grid(3), grid(3)], [pix(3), pix(3), pix(3)], 640, 480),
  jpegShortData: () => openCvAddon().encodeJpeg({ data: new Uint8Array(5), width: 2, height: 2, channels: 3 }),
  jpegQuality0: () => openCvAddon().encodeJpeg({ data: new Uint8Array(12), width: 2, height: 2, channels: 3 }, 0),
  cropZero: () => openCvAddon().cropResize({ data: new Uint8Array(12), width: 2, height: 2, channels: 3 }, 0, 0, 1, 1, 0, 0),
  closedInfo: () => {
    const r = new (openCvAddon().VideoReader)(process.argv[3]!);
    r.close();
    return r.info();
  },
  closedRead: () => {
    const r = new (openCvAddon().VideoReader)(process.argv[3]!);
    r.close();
    return r.read();
  },
  closedSkip: () => {
    const r = new (openCvAddon().VideoReader)(process.argv[3]!);
    r.close();
    r.close();
    return r.skip(3);
  },
  missingVideo: () => new (openCvAddon().VideoReader)('/nonexistent/video.mp4'),
  minViews1: () => triangulationAddon().triangulate(new Float64Array(24), new Float64Array(6), 2, { minViews: 1 }),
};

const name = process.argv[2] ?? '';
const run = cases[name];
if (!run) {
  console.log(JSON.stringify({ error: { name: 'UsageError', message: `unknown case ${name}` } }));
  process.exit(2);
}
try {
  const r = run();
  console.log(JSON.stringify({ ok: r === null ? null : typeof r }));
} catch (e) {
  const x = e as Error & { code?: unknown; kind?: unknown; cvCode?: unknown };
  console.log(JSON.stringify({ error: { name: x.name, code: x.code ?? null, kind: x.kind ?? null, cvCode: x.cvCode ?? null, message: x.message } }));
}

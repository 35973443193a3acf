/**
 * `npm run capture:bench:calib [-- --repeat N]`: how long calibration takes on the Pose2Sim demo's
 * checkerboard photos (4 cameras × 7 JPEGs, 1088×1920, a 4×7 inner-corner board of 60 mm squares):
 * per image, decoding (`cv::imread`) and board detection (`findChessboard`: `cv::findChessboardCorners`
 * + `cornerSubPix`) at full resolution and detected on a downscaled copy (the wizard's live overlay
 * detects at 800 px wide, then refines at full size); per camera, `cv::calibrateCamera` over the
 * detected views; and the board-pose solve that floor extrinsics run (`calibrateExtrinsics`:
 * detection + `cv::solvePnP` + the handedness and origin checks) on each camera's first photo with
 * its solved intrinsics (the demo has no floor-board photo; the computation is the same). Prints the
 * machine, date and load average; figures are wall-clock milliseconds of this one thread (median
 * over `--repeat` runs, default 3). Results in BENCHMARKS.md ("Calibration speed").
 */
import { readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../../models/capture/vec';
import { calibrateExtrinsics, calibrateFromCorners, type Checkerboard } from './calibration';
import { hasAddon, openCvAddon } from './native/index';
import { DEMO, hasDemo, NO_DEMO } from './testing/paths';

const { values } = parseArgs({ options: { repeat: { type: 'string' } } });
const repeat = Math.max(1, Number(values.repeat ?? 3));
const log = (s = '') => process.stdout.write(`${s}\n`);
const BOARD: Checkerboard = { cols: 4, rows: 7, squareM: 0.06 };
const WIDTHS = [0, 800, 480] as const;

/** Median wall-clock ms of `repeat` runs of `f`, and its last result. */
function timed<T>(f: () => T): { ms: number; value: T } {
  const t: number[] = [];
  let value!: T;
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    value = f();
    t.push(performance.now() - t0);
  }
  return { ms: median(t), value };
}
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

if (!hasDemo || !hasAddon('opencv')) {
  log(`calibration benchmark skipped: ${!hasDemo ? NO_DEMO : 'the OpenCV addon is not built (npm run build:native)'}`);
  process.exit(0);
}
const cv = openCvAddon();
const dir = path.join(DEMO, 'S00_Calibration', 'intrinsics');
log(
  `# Calibration speed — ${new Date().toISOString().slice(0, 16)} UTC, ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ')}, Node ${process.version}, OpenCV ${cv.version}; median of ${repeat}`,
);
log();
log(
  '| camera | images | decode ms/image | detect full ms/image | detect 800 px ms/image | detect 480 px ms/image | found (full / 800 / 480) | calibrateCamera ms | RMS px | board pose solve ms |',
);
log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
const all: Record<string, number[]> = { decode: [], w0: [], w800: [], w480: [], calib: [], pose: [] };
for (const cam of readdirSync(dir)
  .filter((d) => d.startsWith('int_'))
  .sort()) {
  const files = readdirSync(path.join(dir, cam))
    .filter((f) => /\.(jpe?g|png)$/i.test(f))
    .sort()
    .map((f) => path.join(dir, cam, f));
  const decode: number[] = [],
    det: Record<number, number[]> = { 0: [], 800: [], 480: [] },
    found: Record<number, number> = { 0: 0, 800: 0, 480: 0 };
  const views: Float64Array[] = [];
  let size = { width: 0, height: 0 };
  for (const f of files) {
    const img = timed(() => cv.readImage(f));
    decode.push(img.ms);
    size = { width: img.value.width, height: img.value.height };
    for (const w of WIDTHS) {
      const d = timed(() => cv.findChessboard(img.value, BOARD.cols, BOARD.rows, w));
      det[w]!.push(d.ms);
      if (d.value) {
        found[w]!++;
        if (w === 0) views.push(d.value);
      }
    }
  }
  const cal = timed(() => calibrateFromCorners(views, size.width, size.height, BOARD));
  const intr = { K: cal.value.K, dist: cal.value.dist, ...size };
  const first = cv.readImage(files[0]!);
  const pose = timed(() => calibrateExtrinsics(cam, first, BOARD, intr));
  const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
  all.decode!.push(...decode);
  all.w0!.push(...det[0]!);
  all.w800!.push(...det[800]!);
  all.w480!.push(...det[480]!);
  all.calib!.push(cal.ms);
  all.pose!.push(pose.ms);
  log(
    `| ${cam.replace(/^int_|_img$/g, '')} | ${files.length} | ${f1(mean(decode))} | ${f1(mean(det[0]!))} | ${f1(mean(det[800]!))} | ${f1(mean(det[480]!))} | ${found[0]} / ${found[800]} / ${found[480]} | ${f1(cal.ms)} | ${cal.value.rmsPx.toFixed(2)} | ${f1(pose.ms)} |`,
  );
}
const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
log(
  `| all | ${all.decode!.length} | ${f1(mean(all.decode!))} | ${f1(mean(all.w0!))} | ${f1(mean(all.w800!))} | ${f1(mean(all.w480!))} | | ${f1(mean(all.calib!))} | | ${f1(mean(all.pose!))} |`,
);
log();
log(
  `A whole rig (4 cameras × 7 photos, full-resolution detection): ${f1((all.decode!.reduce((s, x) => s + x, 0) + all.w0!.reduce((s, x) => s + x, 0) + all.calib!.reduce((s, x) => s + x, 0)) / 1000)} s of one thread; the board-pose solve ${f1(mean(all.pose!))} ms per camera.`,
);

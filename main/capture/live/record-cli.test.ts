/**
 * `npm run capture -- record` edge cases (issue 15), with the demo trial's four videos as sources:
 * sources named after the calibration's cameras (NAME=SOURCE) and refused when they do not match
 * it; empty and non-video files; an --out that cannot be created; a failed open leaves nothing of
 * its own behind (a rerun into the same --out works, a folder that was there is kept); the
 * per-camera "captured" count is this recording's frames only, not the preview's.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTomlCalibration } from '../calibration';
import { runCaptureCli, type CaptureIo } from '../cli';
import { CaptureInputError } from '../errors';
import { hasAddon } from '../native/index';
import { findVideos, probeVideos } from '../sources';
import { BALANCING, DEMO_CALIB, hasDemo, NO_DEMO } from '../testing/paths';
import { bindToCalibration, openRig, parseSourceSpec, type RecordingResult } from './rig';

const ci = process.env.CI === 'true';
const built = hasAddon('capture') && hasAddon('opencv');
const demo = [1, 2, 3, 4].map((i) => path.join(BALANCING, 'videos', `cam0${i}.mp4`));

function io(): CaptureIo & { stdout: string; stderr: string } {
  const o = { stdout: '', stderr: '', isTTY: false, out: (t: string) => void (o.stdout += t), err: (t: string) => void (o.stderr += t) };
  return o;
}
function statuses(file: string): string[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((r) => r.split(',')[4]!);
}

describe.skipIf((!built || !hasDemo) && !ci)(
  `capture record: names, bad sources, output folder, counts${built ? '' : ' (skipped: native capture addon not built; needs libopencv-dev and npm run build:native)'}${hasDemo ? '' : ` (${NO_DEMO})`}`,
  () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'capture-record-cli-'));
    });
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('NAME=SOURCE names the videos, sidecars and Config.toml entries; --calib binds each to its camera and the pipeline reads the folder', async () => {
      expect(parseSourceSpec(`cam_02=${demo[1]}`, 'fast')).toEqual({ kind: 'file', path: demo[1], pace: 'fast', name: 'cam_02' });
      expect(parseSourceSpec('cam_01=/dev/video0')).toEqual({ kind: 'device', device: '/dev/video0', name: 'cam_01' });
      expect(parseSourceSpec('front=3')).toEqual({ kind: 'device', device: 3, name: 'front' });
      const out = path.join(dir, 'named');
      // given out of order: the names, not the --source order, say which camera is which
      const spec = [`cam_03=${demo[2]}`, `cam_01=${demo[0]}`, `cam_04=${demo[3]}`, `cam_02=${demo[1]}`].join(',');
      const i = io();
      const code = await runCaptureCli(['record', '--source', spec, '--seconds', '0.05', '--pace', 'fast', '--calib', DEMO_CALIB, '--out', out, '--json'], i);
      expect(code, i.stderr).toBe(0);
      const r = JSON.parse(i.stdout) as RecordingResult;
      expect(r.cameras.map((c) => [c.name, c.calibrationCamera, c.written])).toEqual([
        ['cam_03', 'cam_03', 3],
        ['cam_01', 'cam_01', 3],
        ['cam_04', 'cam_04', 3],
        ['cam_02', 'cam_02', 3],
      ]);
      expect(readdirSync(path.join(out, 'videos')).sort()).toEqual(
        ['cam_01', 'cam_02', 'cam_03', 'cam_04'].flatMap((n) => [`${n}.avi`, `${n}.timestamps.csv`]),
      );
      const cfg = parseToml(readFileSync(path.join(out, 'Config.toml'), 'utf8')) as {
        capture: { camera: { name: string; calibration_camera: string; source: string; video: string }[] };
      };
      expect(cfg.capture.camera.map((c) => [c.name, c.calibration_camera, path.basename(c.source), c.video])).toEqual([
        ['cam_03', 'cam_03', 'cam03.mp4', path.join('videos', 'cam_03.avi')],
        ['cam_01', 'cam_01', 'cam01.mp4', path.join('videos', 'cam_01.avi')],
        ['cam_04', 'cam_04', 'cam04.mp4', path.join('videos', 'cam_04.avi')],
        ['cam_02', 'cam_02', 'cam02.mp4', path.join('videos', 'cam_02.avi')],
      ]);
      // each calibrated camera gets the video recorded from its own source (cam_03/04 are 1088 px wide)
      const probed = probeVideos(loadTomlCalibration(DEMO_CALIB), findVideos(out));
      expect(probed.map((v) => [v.camera, path.basename(v.path), v.width])).toEqual([
        ['cam_01', 'cam_01.avi', 1080],
        ['cam_02', 'cam_02.avi', 1080],
        ['cam_03', 'cam_03.avi', 1088],
        ['cam_04', 'cam_04.avi', 1088],
      ]);
      // the table says the binding; unnamed sources are cam01… by position and bound the same way
      const t = io();
      expect(
        await runCaptureCli(
          ['record', '--source', demo.join(','), '--seconds', '0.05', '--pace', 'fast', '--calib', DEMO_CALIB, '--out', path.join(dir, 'unnamed')],
          t,
        ),
      ).toBe(0);
      expect(t.stdout).toMatch(/cam01 .*cam01\.avi {2}\(calibration camera cam_01\)/);
      expect(t.stdout).toMatch(/cam04 .*cam04\.avi {2}\(calibration camera cam_04\)/);
    }, 120_000);

    it('--calib refuses, exit 2 and nothing written, a source name that matches no calibrated camera and a calibrated camera without a source', async () => {
      const out = path.join(dir, 'refused');
      const stray = io();
      const s1 = [`cam_01=${demo[0]}`, `cam_02=${demo[1]}`, `cam_03=${demo[2]}`, `side=${demo[3]}`].join(',');
      expect(await runCaptureCli(['record', '--source', s1, '--seconds', '0.05', '--calib', DEMO_CALIB, '--out', out], stray)).toBe(2);
      expect(stray.stderr).toMatch(
        /sources vs calibration .*Calib_qualisys\.toml: side matches no camera in the calibration by name \(calibrated: cam_01, cam_02, cam_03, cam_04\)/,
      );
      expect(stray.stderr).toMatch(/NAME=SOURCE \(e\.g\. --source cam_01=\/dev\/video0,cam_02=FILE\.mp4\)/);
      expect(existsSync(out)).toBe(false);
      const missing = io();
      expect(
        await runCaptureCli(
          ['record', '--source', `cam_01=${demo[0]},cam_02=${demo[1]},cam_03=${demo[2]}`, '--seconds', '0.05', '--calib', DEMO_CALIB, '--out', out],
          missing,
        ),
      ).toBe(2);
      expect(missing.stderr).toMatch(/no source for camera cam_04 \(found cam_01, cam_02, cam_03\); every calibrated camera needs one/);
      expect(existsSync(out)).toBe(false);
      const twice = io();
      expect(
        await runCaptureCli(['record', '--source', `cam_01=${demo[0]},cam01=${demo[1]}`, '--seconds', '0.05', '--calib', DEMO_CALIB, '--out', out], twice),
      ).toBe(2);
      expect(twice.stderr).toMatch(/cam_01 and cam01 both match camera cam_01/);
      // the rig API (the Capture page's path) refuses the same way, typed
      await expect(
        openRig(
          demo.slice(0, 2).map((p) => ({ kind: 'file' as const, path: p })),
          { record: { outDir: out, calibrationPath: DEMO_CALIB } },
        ),
      ).rejects.toMatchObject({ name: 'CaptureInputError', kind: 'missing_camera' });
      expect(existsSync(out)).toBe(false);
      expect(() => bindToCalibration(path.join(dir, 'no-calib.toml'), ['cam01'])).toThrow(CaptureInputError);
      const noCalib = io();
      expect(
        await runCaptureCli(['record', '--source', demo[0]!, '--seconds', '0.05', '--calib', path.join(dir, 'no-calib.toml'), '--out', out], noCalib),
      ).toBe(2);
      expect(noCalib.stderr).toMatch(/calibration file .*no-calib\.toml does not exist/);
    }, 60_000);

    it('--calib refuses, exit 2 and nothing written, a camera whose negotiated size is not the one it was calibrated at (instead of process failing later with size_mismatch)', async () => {
      // cam_03 calibrated at 720×1280: its source (the demo's cam03.mp4) delivers 1088×1920
      const lines = readFileSync(DEMO_CALIB, 'utf8').split('\n');
      const at = lines.indexOf('[cam_03]');
      const sizeLine = lines.findIndex((l, i) => i > at && l.startsWith('size'));
      lines[sizeLine] = 'size = [ 720.0, 1280.0]';
      const calib = path.join(dir, 'calib-cam03-720.toml');
      writeFileSync(calib, lines.join('\n'));
      const out = path.join(dir, 'size-refused');
      const o = io();
      expect(await runCaptureCli(['record', '--source', demo.join(','), '--seconds', '0.05', '--pace', 'fast', '--calib', calib, '--out', out], o)).toBe(2);
      expect(o.stderr).toMatch(/cam03 delivers 1088×1920 px but camera cam_03 was calibrated at 720×1280 px \(tolerance 16 px\); nothing was recorded/);
      expect(o.stderr).not.toMatch(/cam01 delivers|cam04 delivers/);
      expect(existsSync(out)).toBe(false);
      // the rig API (the Capture page's path), typed
      await expect(
        openRig(
          demo.map((p) => ({ kind: 'file' as const, path: p, pace: 'fast' as const })),
          { record: { outDir: out, seconds: 0.05, calibrationPath: calib } },
        ),
      ).rejects.toMatchObject({ name: 'CaptureInputError', kind: 'size_mismatch' });
      expect(existsSync(out)).toBe(false);
      // the calibration's own sizes (1088 vs the 1080-wide cam01/cam02: within 16 px) are accepted
      const ok = io();
      expect(
        await runCaptureCli(
          ['record', '--source', demo.join(','), '--seconds', '0.05', '--pace', 'fast', '--calib', DEMO_CALIB, '--out', path.join(dir, 'size-ok')],
          ok,
        ),
        ok.stderr,
      ).toBe(0);
    }, 60_000);

    it('an empty file or a file that is not a video exits 2 with a typed error naming the source; the --out it would have used is not left behind', async () => {
      const empty = path.join(dir, 'empty.mp4');
      writeFileSync(empty, '');
      const notVideo = path.join(dir, 'notes.csv');
      writeFileSync(notVideo, 'frame,value\n1,2\n');
      const text = path.join(dir, 'readme.txt');
      writeFileSync(text, 'hello world\n'.repeat(100));
      const cases: [string, RegExp][] = [
        [`${demo[0]},cam02=${empty}`, /source ".*empty\.mp4" \(cam02\) is an empty file \(0 bytes\), not a video/],
        [`${demo[0]},${notVideo}`, /source ".*notes\.csv" \(cam02\) cannot be opened as a video \(not a video file/],
        [`${demo[0]},${text}`, /source ".*readme\.txt" \(cam02\) (is a text file .*not a video|cannot be opened as a video)/],
      ];
      for (const [spec, msg] of cases) {
        const out = path.join(dir, 'bad-source', 'trial');
        const e = io();
        expect(await runCaptureCli(['record', '--source', spec, '--seconds', '0.05', '--out', out], e), spec).toBe(2);
        expect(e.stderr).toMatch(msg);
        expect(existsSync(path.join(dir, 'bad-source')), spec).toBe(false);
      }
      await expect(openRig([{ kind: 'file', path: notVideo }])).rejects.toMatchObject({ name: 'CaptureInputError', kind: 'unreadable_video' });
      await expect(openRig([{ kind: 'file', path: empty }])).rejects.toMatchObject({ name: 'CaptureInputError', kind: 'empty_video' });
    }, 60_000);

    it('a failed open takes back only what it created: an existing --out folder stays (empty), and a rerun into it records', async () => {
      const out = path.join(dir, 'rerun');
      mkdirSync(out);
      const bad = path.join(dir, 'corrupt.mp4');
      writeFileSync(bad, 'not an mp4 at all'.repeat(20));
      const e = io();
      expect(await runCaptureCli(['record', '--source', `${demo[0]},${bad}`, '--seconds', '0.05', '--out', out], e)).toBe(2);
      expect(readdirSync(out)).toEqual([]); // the folder was there before: kept, and nothing of this run in it
      // an empty videos/ left by an older version's failed open does not block the rerun either
      mkdirSync(path.join(out, 'videos'));
      const ok = io();
      expect(await runCaptureCli(['record', '--source', demo.slice(0, 2).join(','), '--seconds', '0.05', '--pace', 'fast', '--out', out], ok), ok.stderr).toBe(
        0,
      );
      expect(readdirSync(path.join(out, 'videos')).sort()).toEqual(['cam01.avi', 'cam01.timestamps.csv', 'cam02.avi', 'cam02.timestamps.csv']);
      // a recording that is there is never recorded over, and a failed open next to it removes nothing
      const again = io();
      expect(await runCaptureCli(['record', '--source', `${bad}`, '--seconds', '0.05', '--out', out], again)).toBe(2);
      expect(again.stderr).toMatch(/not an empty folder/);
      expect(readdirSync(path.join(out, 'videos'))).toHaveLength(4);
    }, 60_000);

    it('an --out that cannot be created is a typed error (exit 2) naming the path and what to do', async () => {
      const file = path.join(dir, 'a-file');
      writeFileSync(file, 'x');
      const e = io();
      expect(await runCaptureCli(['record', '--source', demo[0]!, '--seconds', '0.05', '--out', path.join(file, 'trial')], e)).toBe(2);
      expect(e.stderr).toMatch(/cannot create the trial folder .*a-file\/trial \(ENOTDIR on mkdir .*\); a file is in the way/);
      await expect(openRig([{ kind: 'file', path: demo[0]! }], { record: { outDir: path.join(file, 'trial') } })).rejects.toMatchObject({
        kind: 'unwritable_output',
      });
      // No write permission: root bypasses file modes, so as root a read-only tmpfs stands in (where mounting is permitted).
      const locked = path.join(dir, 'locked');
      mkdirSync(locked);
      let mounted = false;
      if (process.getuid?.() === 0) {
        try {
          execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', locked], { stdio: 'ignore' });
          mounted = true;
        } catch {
          /* no CAP_SYS_ADMIN here: the ENOTDIR case above covers the error path */
        }
      } else chmodSync(locked, 0o555);
      try {
        if (mounted || process.getuid?.() !== 0) {
          const p = io();
          expect(await runCaptureCli(['record', '--source', demo[0]!, '--seconds', '0.05', '--out', path.join(locked, 'trial')], p)).toBe(2);
          expect(p.stderr).toMatch(/cannot create the trial folder .*locked\/trial \((EACCES|EROFS) on mkdir .*\); choose a folder you can write to/);
        }
      } finally {
        if (mounted) execFileSync('umount', [locked]);
        else chmodSync(locked, 0o755);
      }
    }, 60_000);

    it('"captured" counts the frames of this recording only, not the preview frames before or after it (CLI table and result)', async () => {
      // A rig that previews before and after the recording: its live counters keep growing, the recording's do not.
      const rig = await openRig(demo.slice(0, 2).map((p) => ({ kind: 'file' as const, path: p, pace: 'realtime' as const, loop: true })));
      await new Promise((r) => setTimeout(r, 400));
      rig.startRecording({ outDir: path.join(dir, 'counts'), seconds: 0.3 });
      const r = await rig.recordingDone();
      await new Promise((res) => setTimeout(res, 400));
      const live = rig.counts();
      await rig.close();
      r.cameras.forEach((c, i) => {
        const st = statuses(c.timestamps);
        expect(c.captured, c.name).toBe(st.filter((x) => x === 'captured').length);
        expect(c.captured + c.duplicated, c.name).toBe(c.written);
        expect(c.written).toBe(r.frames);
        expect(live[i]!.captured, c.name).toBeGreaterThan(c.captured); // the preview's frames are counted there, not here
      });
      const cfg = parseToml(readFileSync(r.config, 'utf8')) as { capture: { camera: { captured: number }[] } };
      expect(cfg.capture.camera.map((c) => c.captured)).toEqual(r.cameras.map((c) => c.captured));
      // The CLI's table: captured + duplicated = written on every row
      const t = io();
      expect(await runCaptureCli(['record', '--source', demo.slice(0, 2).join(','), '--seconds', '0.3', '--out', path.join(dir, 'counts-cli')], t)).toBe(0);
      const rows = t.stdout.split('\n').filter((l) => /^cam0\d /.test(l));
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        const [, , captured, written, , duplicated] = row
          .trim()
          .split(/\s+/)
          .map((x, k) => (k >= 2 && k <= 5 ? Number(x) : x)) as [string, string, number, number, number, number];
        expect(captured + duplicated, row).toBe(written);
      }
      expect(t.stdout).toMatch(/written = captured \+ duplicated/);
    }, 60_000);
  },
);

/**
 * Real-data failure cases built from the Pose2Sim demo (tests and `capture:validate`): copies of a
 * trial's OpenPose JSON folders in a temp dir with one thing broken, the way it breaks in a clinic.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectPoint, type Vec3 } from '../../../models/capture/camera';
import { prng } from '../../../models/capture/synthetic';
import { parseTrc } from '../../../models/capture/trc';
import { add, cross, dot, mid, normalize, scale, sub } from '../../../models/capture/vec';
import { loadTomlCalibration } from '../calibration';

/** The trial's keypoint folders (pose-associated/, else pose/) copied to a temp trial dir; `edit` may rewrite one camera's frame list. */
function copyTrial(
  trialDir: string,
  edit: (cam: string, files: string[], read: (f: string) => unknown) => (unknown | null)[] | null,
  keep: (n: number) => number = (n) => n,
): string {
  const sub = ['pose-associated', 'pose'].find((s) => {
    try {
      return readdirSync(path.join(trialDir, s)).length > 0;
    } catch {
      return false;
    }
  })!;
  const out = mkdtempSync(path.join(tmpdir(), 'capture-case-'));
  for (const cam of readdirSync(path.join(trialDir, sub)).sort()) {
    const src = path.join(trialDir, sub, cam),
      dst = path.join(out, 'pose', cam);
    mkdirSync(dst, { recursive: true });
    const files = readdirSync(src)
      .filter((f) => f.endsWith('.json'))
      .sort();
    const read = (f: string) => JSON.parse(readFileSync(path.join(src, f), 'utf8')) as unknown;
    const docs = edit(cam, files, read);
    files.slice(0, keep(files.length)).forEach((f, i) => {
      if (!docs) copyFileSync(path.join(src, f), path.join(dst, f));
      else writeFileSync(path.join(dst, f), JSON.stringify(docs[i] ?? { version: 1.3, people: [] }));
    });
  }
  return out;
}

/**
 * A desynchronised camera: `cam`'s files keep their names and count, but file i holds frame
 * i + `shift` (the last `shift` files hold nobody) — what a camera that started recording
 * `shift` frames late looks like (a negative `shift`: the first files hold nobody, a camera that started early).
 * With `trim`, every camera keeps only the n − |shift| frames all of them cover (as a recorder that trims to the common span).
 */
export function shiftCameraFiles(trialDir: string, cam: string, shift: number, trim = false): string {
  if (trim) {
    // every camera keeps only the frames all of them cover (n − |shift| files): no empty frames give the shift away
    const at = (c: string) => (c === cam ? Math.max(shift, 0) : Math.max(-shift, 0));
    return copyTrial(
      trialDir,
      (c, files, read) => files.slice(0, files.length - Math.abs(shift)).map((_, i) => read(files[i + at(c)]!)),
      (n) => n - Math.abs(shift),
    );
  }
  return copyTrial(trialDir, (c, files, read) =>
    c === cam ? files.map((_, i) => (i + shift >= 0 && i + shift < files.length ? read(files[i + shift]!) : null)) : null,
  );
}

/**
 * Invented legs: in every camera, the knees and ankles (and feet) of every person are replaced by
 * plausible-looking guesses — jittered ±`jitterPx` around a point below the hip, with a 2D model's
 * low confidence (0.35) — as a 2D model reports legs it cannot see (occluded, out of frame).
 * The copies carry no Config.toml: pass the frame rate (60 fps for the demo).
 */
export function inventLegs(trialDir: string, jitterPx = 60, seed = 7): string {
  const rand = prng(seed);
  const LEG = [13, 14, 15, 16, 19, 20, 21, 22, 23, 24]; // BODY_25B knees, ankles, toes, heels
  return copyTrial(trialDir, (_cam, files, read) =>
    files.map((f) => {
      const doc = read(f) as { people: { pose_keypoints_2d?: number[] }[] };
      for (const p of doc.people) {
        const k = p.pose_keypoints_2d;
        if (!k || k.length < 25 * 3) continue;
        const hx = ((k[11 * 3] ?? 0) + (k[12 * 3] ?? 0)) / 2,
          hy = ((k[11 * 3 + 1] ?? 0) + (k[12 * 3 + 1] ?? 0)) / 2;
        for (const j of LEG) {
          const down = j === 13 || j === 14 ? 220 : 430;
          k[j * 3] = hx + (rand() * 2 - 1) * jitterPx;
          k[j * 3 + 1] = hy + down + (rand() * 2 - 1) * jitterPx;
          k[j * 3 + 2] = 0.35;
        }
      }
      return doc;
    }),
  );
}

/**
 * Copied points given realistic jitter: every detected keypoint (confidence > 0) of every person in
 * every camera moved by Gaussian noise of SD `sdPx` px (Box–Muller on the seeded PRNG), confidences
 * untouched — what a tool that fills in or holds a pose looks like after "adding realism", and
 * what defeats a byte-identical test (issue 14 review: the multi-person trial at 0.7 px). With
 * `confidenceSd` > 0 each confidence also gets Gaussian noise of that SD (clamped to 0.05–1), what
 * defeats the constant-confidence test too (issue 14 re-review B3).
 */
export function jitterKeypoints(trialDir: string, sdPx = 0.7, seed = 3, confidenceSd = 0): string {
  const rand = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(Math.max(rand(), 1e-12))) * Math.cos(2 * Math.PI * rand());
  return copyTrial(trialDir, (_cam, files, read) =>
    files.map((f) => {
      const doc = read(f) as { people: { pose_keypoints_2d?: number[] }[] };
      for (const p of doc.people) {
        const k = p.pose_keypoints_2d ?? [];
        for (let i = 0; i + 2 < k.length; i += 3)
          if ((k[i + 2] ?? 0) > 0) {
            k[i] = (k[i] ?? 0) + sdPx * gauss();
            k[i + 1] = (k[i + 1] ?? 0) + sdPx * gauss();
            if (confidenceSd > 0) k[i + 2] = Math.min(1, Math.max(0.05, (k[i + 2] ?? 0) + confidenceSd * gauss()));
          }
      }
      return doc;
    }),
  );
}

/**
 * Misplaced hip points, the way a different 2D model places them: in every camera the athlete's
 * hip keypoints (BODY_25B 11, 12) are moved by the image displacement of the hips when the hip line
 * turns about the trunk axis by up to `maxDeg` (a sin² bump over frames 30–75, as the hip line
 * from MoveNet on the demo videos turned against OpenPose's). The displacement is computed from
 * Pose2Sim's own 3D (`pose-3d/*_0-100.trc`, raw) and the calibration, so the moved hips stay
 * consistent between views (triangulation does not reject them) and keep OpenPose's 2D noise.
 * The other keypoints and every confidence are untouched. Needs the BalancingTrial (TRC + pose-associated).
 */
export function misplaceHips(trialDir: string, calibPath: string, maxDeg = 40): string {
  const cams = loadTomlCalibration(calibPath);
  const trcFile = readdirSync(path.join(trialDir, 'pose-3d')).find((f) => /_0-\d+\.trc$/.test(f));
  if (!trcFile) throw new Error(`${trialDir}/pose-3d has no raw TRC`);
  const trc = parseTrc(readFileSync(path.join(trialDir, 'pose-3d', trcFile), 'utf8'));
  const M = trc.markers.length;
  const at = (f: number, name: string): Vec3 => {
    const m = trc.markers.indexOf(name);
    return [trc.points[(f * M + m) * 3]!, trc.points[(f * M + m) * 3 + 1]!, trc.points[(f * M + m) * 3 + 2]!];
  };
  // Rodrigues rotation of v about unit axis u by a radians
  const rot = (v: Vec3, u: Vec3, a: number): Vec3 => add(add(scale(v, Math.cos(a)), scale(cross(u, v), Math.sin(a))), scale(u, dot(u, v) * (1 - Math.cos(a))));
  return copyTrial(trialDir, (cam, files, read) => {
    const c = cams.find((k) => k.name.replace(/\D/g, '') === cam.replace(/\D/g, ''));
    if (!c) throw new Error(`no calibrated camera for ${cam}`);
    return files.map((file, f) => {
      const doc = read(file) as { people: { pose_keypoints_2d?: number[] }[] };
      const k = doc.people[0]?.pose_keypoints_2d;
      const a = f >= 30 && f <= 75 ? ((maxDeg * Math.PI) / 180) * Math.sin((Math.PI * (f - 30)) / 45) ** 2 : 0;
      if (!k || k.length < 25 * 3 || f >= trc.frames || a === 0) return doc;
      const lh = at(f, 'LHip'),
        rh = at(f, 'RHip');
      const midHip = mid(lh, rh),
        up = normalize(sub(mid(at(f, 'LShoulder'), at(f, 'RShoulder')), midHip));
      for (const [j, h] of [
        [11, lh],
        [12, rh],
      ] as const) {
        if (!((k[j * 3 + 2] ?? 0) > 0) || !h.every(Number.isFinite)) continue;
        const moved = add(midHip, rot(sub(h, midHip), up, a));
        const p0 = projectPoint(c, h),
          p1 = projectPoint(c, moved);
        if (!p0 || !p1) continue;
        k[j * 3] = k[j * 3]! + p1[0] - p0[0];
        k[j * 3 + 1] = k[j * 3 + 1]! + p1[1] - p0[1];
      }
      return doc;
    });
  });
}

/**
 * The athlete lost in one view: `cam`'s 2D model finds nobody in frames `from`…`to` (inclusive;
 * those files list no people), as when a passer-by or equipment hides the athlete from one camera,
 * the athlete leaves its field of view, or the 2D model loses track in that view (BlazePose lost
 * the demo athlete in cam_04 in 18 of 40 frames). The other cameras are untouched, so the points in
 * those frames are triangulated from the remaining three views, or two where one of them is excluded.
 */
export function loseAthleteInView(trialDir: string, cam: string, from: number, to: number): string {
  return copyTrial(trialDir, (c, files, read) =>
    c === cam ? files.map((f, i) => (i >= from && i <= to ? { ...(read(f) as object), people: [] } : read(f))) : null,
  );
}

/**
 * A 2-camera rig from the demo: the trial's first two cameras' keypoint folders (pose/cam01_json,
 * cam02_json; `shiftCam02` frames of cam02 shifted as {@link shiftCameraFiles} does) and a
 * calibration file with those two cameras only. Returns the trial dir and the calibration path.
 */
export function twoCameraTrial(trialDir: string, calibPath: string, shiftCam02 = 0): { trialDir: string; calibPath: string } {
  const dir = copyTrial(trialDir, (c, files, read) =>
    c === 'cam02_json' && shiftCam02 ? files.map((_, i) => (i + shiftCam02 < files.length ? read(files[i + shiftCam02]!) : null)) : null,
  );
  for (const cam of readdirSync(path.join(dir, 'pose'))) if (!/^cam0[12]_json$/.test(cam)) rmSync(path.join(dir, 'pose', cam), { recursive: true });
  const toml = readFileSync(calibPath, 'utf8');
  const keep = toml
    .split(/\n(?=\[)/)
    .filter((s) => !/^\[cam_0[3-9]\]/.test(s))
    .join('\n');
  const cal = path.join(dir, 'calib-2cams.toml');
  writeFileSync(cal, keep);
  return { trialDir: dir, calibPath: cal };
}

/**
 * A second person near the athlete: in every camera, beside the athlete's own 2D (untouched), a
 * person whose body is Pose2Sim's 3D of the same athlete (`pose-3d/*_0-100.trc`, raw) replayed at
 * half speed from frame 10 and moved by `offset` (metres, world frame), projected through the
 * calibration with 1.5 px Gaussian noise and the athlete's own confidences at the replayed frame.
 * Points outside the image are left out. As the issue 14 re-review built it: with the tap on the
 * athlete, a stray point at the athlete's box edge made frame-to-frame tracking in the tapped view
 * switch to this person at frame 9, and every reading stayed trustworthy.
 * Needs the BalancingTrial (TRC + pose-associated).
 */
export function addSecondPerson(trialDir: string, calibPath: string, offset: Vec3 = [-0.9, 0, 0], seed = 5): string {
  const cams = loadTomlCalibration(calibPath);
  const trcFile = readdirSync(path.join(trialDir, 'pose-3d')).find((f) => /_0-\d+\.trc$/.test(f));
  if (!trcFile) throw new Error(`${trialDir}/pose-3d has no raw TRC`);
  const trc = parseTrc(readFileSync(path.join(trialDir, 'pose-3d', trcFile), 'utf8'));
  const M = trc.markers.length;
  // BODY_25B index → TRC marker (Pose2Sim's names)
  const MARKERS: Record<number, string> = {
    0: 'Nose',
    5: 'LShoulder',
    6: 'RShoulder',
    7: 'LElbow',
    8: 'RElbow',
    9: 'LWrist',
    10: 'RWrist',
    11: 'LHip',
    12: 'RHip',
    13: 'LKnee',
    14: 'RKnee',
    15: 'LAnkle',
    16: 'RAnkle',
    17: 'Neck',
    18: 'Head',
    19: 'LBigToe',
    20: 'LSmallToe',
    21: 'LHeel',
    22: 'RBigToe',
    23: 'RSmallToe',
    24: 'RHeel',
  };
  const rand = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(Math.max(rand(), 1e-12))) * Math.cos(2 * Math.PI * rand());
  return copyTrial(trialDir, (cam, files, read) => {
    const c = cams.find((k) => k.name.replace(/\D/g, '') === cam.replace(/\D/g, ''));
    if (!c) throw new Error(`no calibrated camera for ${cam}`);
    const docs = files.map((f) => read(f) as { people: { pose_keypoints_2d?: number[] }[] });
    return docs.map((doc, f) => {
      const src = Math.min(Math.floor(f / 2) + 10, trc.frames - 1, docs.length - 1);
      const conf = docs[src]!.people.find((p) => p.pose_keypoints_2d?.length)?.pose_keypoints_2d?.filter((_, i) => i % 3 === 2) ?? [];
      const k = new Array<number>(25 * 3).fill(0);
      for (const [j, name] of Object.entries(MARKERS)) {
        const m = trc.markers.indexOf(name);
        const cj = conf[Number(j)] ?? 0;
        if (m < 0 || !(cj > 0)) continue;
        const X: Vec3 = add([trc.points[(src * M + m) * 3]!, trc.points[(src * M + m) * 3 + 1]!, trc.points[(src * M + m) * 3 + 2]!], offset);
        const u = X.every(Number.isFinite) ? projectPoint(c, X) : null;
        if (!u || u[0] < 0 || u[1] < 0 || u[0] >= c.width || u[1] >= c.height) continue;
        k[Number(j) * 3] = u[0] + 1.5 * gauss();
        k[Number(j) * 3 + 1] = u[1] + 1.5 * gauss();
        k[Number(j) * 3 + 2] = cj;
      }
      return { ...doc, people: [...doc.people, { person_id: [-1], pose_keypoints_2d: k }] };
    });
  });
}

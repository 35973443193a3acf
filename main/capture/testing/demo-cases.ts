/**
 * Real-data failure cases built from the Pose2Sim demo (tests and `capture:validate`): copies of a
 * trial's OpenPose JSON folders in a temp dir with one thing broken, the way it breaks in a clinic.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { prng } from '../../../models/capture/synthetic';

/** The trial's keypoint folders (pose-associated/, else pose/) copied to a temp trial dir; `edit` may rewrite one camera's frame list. */
function copyTrial(trialDir: string, edit: (cam: string, files: string[], read: (f: string) => unknown) => (unknown | null)[] | null): string {
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
    files.forEach((f, i) => {
      if (!docs) copyFileSync(path.join(src, f), path.join(dst, f));
      else writeFileSync(path.join(dst, f), JSON.stringify(docs[i] ?? { version: 1.3, people: [] }));
    });
  }
  return out;
}

/**
 * A desynchronised camera: `cam`'s files keep their names and count, but file i holds frame
 * i + `shift` (the last `shift` files hold nobody) — what a camera that started recording
 * `shift` frames late looks like.
 */
export function shiftCameraFiles(trialDir: string, cam: string, shift: number): string {
  return copyTrial(trialDir, (c, files, read) => (c === cam ? files.map((_, i) => (i + shift < files.length ? read(files[i + shift]!) : null)) : null));
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

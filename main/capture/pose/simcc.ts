/**
 * SimCC decoding (Li et al. 2022, "SimCC: a Simple Coordinate Classification Perspective for
 * Human Pose Estimation"; as used by RTMPose): per keypoint, x = argmax(simcc_x)/r and
 * y = argmax(simcc_y)/r in model-input pixels, confidence = min(max simcc_x, max simcc_y)
 * clipped to [0, 1] (rtmlib's `get_simcc_maximum`), r = split ratio (2.0 for RTMPose).
 */

/** Decode K keypoints from flat simcc_x (K×Wx) and simcc_y (K×Hy). Returns K×3 in input pixels. */
export function decodeSimcc(simccX: Float32Array, simccY: Float32Array, keypoints: number, splitRatio = 2): Float64Array {
  const wx = simccX.length / keypoints,
    hy = simccY.length / keypoints;
  if (!Number.isInteger(wx) || !Number.isInteger(hy))
    throw new RangeError(`SimCC outputs (${simccX.length}, ${simccY.length}) are not divisible by ${keypoints} keypoints`);
  const out = new Float64Array(keypoints * 3);
  for (let k = 0; k < keypoints; k++) {
    let bx = 0,
      mx = -Infinity,
      by = 0,
      my = -Infinity;
    for (let i = 0; i < wx; i++) {
      const v = simccX[k * wx + i] ?? -Infinity;
      if (v > mx) {
        mx = v;
        bx = i;
      }
    }
    for (let i = 0; i < hy; i++) {
      const v = simccY[k * hy + i] ?? -Infinity;
      if (v > my) {
        my = v;
        by = i;
      }
    }
    const conf = Math.min(mx, my);
    out[k * 3] = bx / splitRatio;
    out[k * 3 + 1] = by / splitRatio;
    out[k * 3 + 2] = conf > 0 ? Math.min(1, conf) : 0;
  }
  return out;
}

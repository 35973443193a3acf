/** Crop geometry shared by the top-down models. */
import type { Box } from './types';

/**
 * Grow `box` by `scale` about its centre and pad it to `aspect` = width/height
 * (MoveNet 1:1, RTMPose 192:256). Returns the crop box in frame pixels.
 */
export function cropBox(box: Box, aspect: number, scale: number): Box {
  const cx = (box[0] + box[2]) / 2,
    cy = (box[1] + box[3]) / 2;
  let w = (box[2] - box[0]) * scale,
    h = (box[3] - box[1]) * scale;
  if (w / h > aspect) h = w / aspect;
  else w = h * aspect;
  return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
}

/** Map a point in an `inW`×`inH` model input (align-corners) back to frame pixels of `crop`. */
export function fromCrop(crop: Box, inW: number, inH: number, x: number, y: number): [number, number] {
  return [crop[0] + (x * (crop[2] - crop[0])) / (inW - 1), crop[1] + (y * (crop[3] - crop[1])) / (inH - 1)];
}

/** Intersection over union of two boxes. */
export function iou(a: Box, b: Box): number {
  const ix = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])),
    iy = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = ix * iy,
    u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return u > 0 ? inter / u : 0;
}

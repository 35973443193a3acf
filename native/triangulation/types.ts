/**
 * Typings of the triangulation addon (`build/Release/triangulation.node`). The contract is
 * the TypeScript reference's: see models/capture/triangulation.ts.
 */
export interface NativeTriangulationOptions {
  /** Views below this confidence are dropped. @default 0.3 */
  minConfidence?: number;
  /** Mean reprojection error (px) above which views are excluded. @default 15 */
  maxReprojectionPx?: number;
  /** Fewer views → missing point. @default 2 */
  minViews?: number;
}

export interface NativeTriangulationResult {
  /** N×3 world coordinates (metres), NaN when missing. */
  points: Float64Array;
  /** N mean reprojection errors (px), NaN when missing. */
  reprojectionPx: Float64Array;
  /** N bitmasks of the views used. */
  viewMask: Uint32Array;
  /** Per camera: views excluded for reprojection error. */
  excludedCounts: Uint32Array;
  /** Per camera: views dropped for low confidence. */
  lowConfidenceCounts: Uint32Array;
}

export interface TriangulationAddon {
  /**
   * @param projections C×12 row-major 3×4 projection matrices (pixels).
   * @param observations N×C×3 (u px, v px, confidence).
   * @param cameras C (1..16).
   */
  triangulate(projections: Float64Array, observations: Float64Array, cameras: number, options?: NativeTriangulationOptions): NativeTriangulationResult;
  /** Same, computed on a libuv worker thread (off the JavaScript thread). */
  triangulateAsync(
    projections: Float64Array,
    observations: Float64Array,
    cameras: number,
    options?: NativeTriangulationOptions,
  ): Promise<NativeTriangulationResult>;
}

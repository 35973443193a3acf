/**
 * A small pool of calibration worker threads (calib-worker.ts): board detection, intrinsics and
 * floor-board extrinsics never run on the main thread. Each request goes to the worker with the
 * fewest pending requests; errors come back typed (`CalibrationError`, `OpenCvError`).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CameraCalibration } from '../../../models/capture/camera';
import { CalibrationError, type Checkerboard, type CornerIntrinsics } from '../calibration';
import { OpenCvError } from '../native/index';

/** A request to a calibration worker (`id` is filled in by the pool). */
export type CalibRequest =
  | { id: number; type: 'detect'; jpeg: Uint8Array; board: Checkerboard; maxWidth?: number }
  | { id: number; type: 'intrinsics'; views: Float64Array[]; width: number; height: number; board: Checkerboard }
  | {
      id: number;
      type: 'extrinsics';
      name: string;
      jpeg: Uint8Array;
      board: Checkerboard;
      intrinsics: { K: number[]; dist: number[]; width: number; height: number };
    };

/** A worker's answer: `ms` is the time spent in the worker. */
export type CalibReply =
  | { id: number; ok: true; type: 'detect'; corners: Float64Array | null; width: number; height: number; ms: number }
  | ({ id: number; ok: true; type: 'intrinsics'; ms: number } & CornerIntrinsics)
  | { id: number; ok: true; type: 'extrinsics'; camera: CameraCalibration; rmsPx: number; ms: number }
  | { id: number; ok: false; name: string; code: string | null; message: string };

type Ok<T extends CalibRequest['type']> = Extract<CalibReply, { ok: true; type: T }>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (r: CalibReply) => void; reject: (e: unknown) => void }>;
}

/** Worker threads for calibration work; `close()` terminates them. */
export class CalibrationPool {
  readonly #slots: Slot[] = [];
  #next = 1;
  #closed = false;

  /** `size` workers (default: CPU count − 1, at least 1, at most 4). */
  constructor(size = Math.min(4, Math.max(1, availableParallelism() - 1))) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL('./calib-worker-entry.mjs', import.meta.url));
      worker.unref();
      const slot: Slot = { worker, pending: new Map() };
      worker.on('message', (r: CalibReply) => {
        const p = slot.pending.get(r.id);
        slot.pending.delete(r.id);
        p?.resolve(r);
      });
      worker.on('error', (e) => {
        for (const p of slot.pending.values()) p.reject(e);
        slot.pending.clear();
      });
      this.#slots.push(slot);
    }
  }

  /** Find the board in a JPEG frame (`maxWidth`: detect downscaled, refine at full resolution). */
  detect(jpeg: Uint8Array, board: Checkerboard, maxWidth?: number): Promise<Ok<'detect'>> {
    return this.#run({ type: 'detect', jpeg, board, ...(maxWidth ? { maxWidth } : {}) }) as Promise<Ok<'detect'>>;
  }

  /** `calibrateCamera` over one camera's views (see `calibrateFromCorners`). */
  intrinsics(views: Float64Array[], width: number, height: number, board: Checkerboard): Promise<Ok<'intrinsics'>> {
    return this.#run({ type: 'intrinsics', views, width, height, board }) as Promise<Ok<'intrinsics'>>;
  }

  /** Floor-board pose of one camera from a JPEG frame (see `calibrateExtrinsics`). */
  extrinsics(
    name: string,
    jpeg: Uint8Array,
    board: Checkerboard,
    intrinsics: { K: number[]; dist: number[]; width: number; height: number },
  ): Promise<Ok<'extrinsics'>> {
    return this.#run({ type: 'extrinsics', name, jpeg, board, intrinsics }) as Promise<Ok<'extrinsics'>>;
  }

  /** Run one request on the least busy worker. Throws the worker's error, re-typed. */
  async #run(req: DistributiveOmit<CalibRequest, 'id'>): Promise<CalibReply> {
    if (this.#closed) throw new CalibrationError('the calibration workers are closed');
    const slot = this.#slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.#next++;
    const reply = await new Promise<CalibReply>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ ...req, id });
    });
    if (!reply.ok) {
      if (reply.name === 'CalibrationError') throw new CalibrationError(reply.message);
      if (reply.code === 'ERR_OPENCV') throw new OpenCvError(reply.message, 'ERR_OPENCV', null, null);
      throw new Error(reply.message);
    }
    return reply;
  }

  /** Requests waiting or running, over all workers. */
  get busy(): number {
    return this.#slots.reduce((n, s) => n + s.pending.size, 0);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#slots.map((s) => s.worker.terminate()));
    for (const s of this.#slots) for (const p of s.pending.values()) p.reject(new CalibrationError('the calibration workers were closed'));
  }
}

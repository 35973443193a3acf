/**
 * A deadline for HQ's answer to one shape request. HQ answers a live (long-poll) request within
 * its long-poll timeout (20 s, Electric's default) even when nothing changed, so a live request
 * with no response after {@link SHAPE_DEADLINES}`.liveMs` has lost its server: HQ's machine went
 * away without closing the connection (Wi-Fi dropped on the training ground, a half-open or dead
 * keep-alive socket). Without a deadline such a request hangs until the operating system gives up
 * on the socket, and the device does not learn that it is offline.
 *
 * Why not the client's own watchdog (`liveRequestTimeoutMs` of @electric-sql/client, 45 s): it
 * restarts the request silently (an abort, not a failure), so the engine's online tracking never
 * sees it, and it covers live requests only. This deadline fails the request as a network error,
 * which the engine counts as "HQ unreachable" and the client retries with its back-off.
 *
 * The deadline covers the wait for the response headers; the body of a shape response follows
 * them at once (the shape service builds it before answering).
 */

/**
 * Default deadlines, ms: a live request 30 s (HQ's 20 s long-poll plus 10 s); any other shape
 * request 120 s (a first request on a large table waits for the shape's snapshot).
 */
export const SHAPE_DEADLINES = { liveMs: 30_000, otherMs: 120_000 } as const;

/**
 * Wrap `fetchFn` so a request fails with a `TimeoutError` (a DOMException) when no response has
 * arrived in time: `deadlines.liveMs` for a request with `live=true` in its URL, else
 * `deadlines.otherMs`. The caller's own signal still aborts the request (and its body) as before;
 * a deadline is told apart from the caller's abort by `init.signal.aborted` staying false.
 */
export function withResponseDeadline(fetchFn: typeof fetch, deadlines: { liveMs: number; otherMs: number }): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const ms = /[?&]live=true(&|$)/.test(url) ? deadlines.liveMs : deadlines.otherMs;
    const ctrl = new AbortController();
    const outer = init?.signal ?? null;
    const onOuterAbort = (): void => ctrl.abort(outer?.reason);
    if (outer?.aborted) ctrl.abort(outer.reason);
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    const timer = setTimeout(
      () => ctrl.abort(new DOMException(`HQ did not answer a shape request within ${Math.round(ms / 1000)} s; it is treated as unreachable.`, 'TimeoutError')),
      ms,
    );
    try {
      return await fetchFn(input, { ...init, signal: ctrl.signal });
    } catch (e) {
      outer?.removeEventListener('abort', onOuterAbort);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * HQ's answers that refuse a shape for good, which the Electric client would otherwise retry:
 * - past its shape limits (sync/http/shape-registry.ts): 429 `RateLimited` with
 *   `kind: "shape_limit"` and a `Retry-After` of the registry's idle time (6 h), since a slot frees
 *   only when a shape goes unused that long or a device is revoked. @electric-sql/client retries
 *   every 429 after its `Retry-After` (its `HTTP_RETRY_STATUS_CODES`), so a sync would sleep for
 *   hours with nothing said;
 * - a shape larger than the shape service's whole memory budget (sync/shape ShapeTooLargeError,
 *   passed on by HQ's proxy): 503 `Unavailable` with `kind: "shape_too_large"`. The client retries
 *   every 5xx, and the engine would count HQ, which did answer, as unreachable.
 * {@link withShapeRefusalFinal} passes either on as HTTP 400 with HQ's body unchanged: the client
 * does not retry a 400, and the engine reports it with HQ's words (it checks the body's
 * `error.kind`, see {@link isShapeLimit}, {@link isShapeTooLarge}). Any other 429 or 503 passes unchanged.
 */
export function withShapeRefusalFinal(fetchFn: typeof fetch): typeof fetch {
  return async (input, init) => {
    const res = await fetchFn(input, init);
    if (res.status !== 429 && res.status !== 503) return res;
    const text = await res.text();
    const final = res.status === 429 ? isShapeLimit(text) : isShapeTooLarge(text);
    return new Response(text, { status: final ? 400 : res.status, statusText: res.statusText, headers: res.headers });
  };
}

function hqErrorKind(body: unknown): unknown {
  let json = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return (json as { error?: { kind?: unknown } } | null)?.error?.kind;
}

/** True when `body` (a response body, text or parsed JSON) is HQ's `shape_limit` refusal. */
export function isShapeLimit(body: unknown): boolean {
  return hqErrorKind(body) === 'shape_limit';
}

/** True when `body` (a response body, text or parsed JSON) is HQ's `shape_too_large` refusal (its shape service's memory budget). */
export function isShapeTooLarge(body: unknown): boolean {
  return hqErrorKind(body) === 'shape_too_large';
}

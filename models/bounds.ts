/**
 * Bounded input, the pure part (issue 9 §3): measure a value or a raw JSON text for size and depth
 * without recursion, so a 20,000-level nested input cannot overflow the call stack. Used by every
 * door of the app (main/services/bounds.ts) and by HQ's upload endpoint (sync/http/app.ts).
 *
 * Limits: 64 KiB of canonical JSON and 32 levels of nesting. The largest legitimate input of the
 * catalogue (a 50-row bulk change, the policy maximum) is well under 16 KiB and 4 levels deep.
 */

/** Maximum canonical-JSON size of one tool input, in bytes (UTF-16 code units, an upper bound for ASCII JSON). */
export const MAX_TOOL_INPUT_BYTES = 64 * 1024;
/**
 * Maximum canonical-JSON size of a `capture.recordSession` input, in bytes: a processed trial's
 * per-frame angle series grows with its length (about 20 series × 6 bytes per frame, so ~120 B per
 * frame: a 100-frame demo trial with its readings and conditions is 67–95 KB, over the common
 * 64 KiB; 3 MiB holds ~25,000 frames, 7 min at 60 fps). Kept under HQ's 4 MiB upload body
 * (sync/http/app.ts) so a stored session can always be uploaded.
 */
export const MAX_CAPTURE_SESSION_INPUT_BYTES = 3 * 1024 * 1024;
/** Maximum nesting depth of one tool input (the top-level object is depth 1). */
export const MAX_TOOL_INPUT_DEPTH = 32;

/**
 * The message a refused input gets (for a model, a page or a CLI): what limit it passed and what
 * to send instead; no content echoed. Every door uses this one wording.
 */
export function boundsMessage(toolName: string, m: Pick<InputMeasure, 'reason'>, maxBytes = MAX_TOOL_INPUT_BYTES): string {
  return m.reason === 'depth'
    ? `The input for ${toolName.slice(0, 80)} is nested deeper than ${MAX_TOOL_INPUT_DEPTH} levels; it was refused and nothing ran. Send a flat object with the documented fields.`
    : `The input for ${toolName.slice(0, 80)} is larger than ${maxBytes} bytes; it was refused and nothing ran. Send only the documented fields, or split the change into smaller ones.`;
}

/**
 * The field issue of a refused input (`{path: '(input)', message: 'nested too deep' | 'too large'}`),
 * the same from every door (service call, assistant tool call, MCP tool call).
 */
export function boundsIssue(reason: 'size' | 'depth' | undefined): { path: '(input)'; message: 'nested too deep' | 'too large' } {
  return { path: '(input)', message: reason === 'depth' ? 'nested too deep' : 'too large' };
}

/** What a measurement found. `bytes` and `depth` stop counting once a limit is passed (they are lower bounds then). */
export interface InputMeasure {
  ok: boolean;
  /** Canonical-JSON length counted so far (characters). */
  bytes: number;
  /** Deepest nesting seen so far. */
  depth: number;
  /** Why it was refused (`size` or `depth`), when not ok. */
  reason?: 'size' | 'depth';
}

/**
 * Measure `value` without recursion, stopping as soon as a limit is passed (so a 3 MB input costs
 * at most ~64 KiB of work to refuse).
 */
export function measureInput(value: unknown, maxBytes = MAX_TOOL_INPUT_BYTES, maxDepth = MAX_TOOL_INPUT_DEPTH): InputMeasure {
  let bytes = 0;
  let deepest = 0;
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 1 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (v === null || v === undefined) bytes += 4;
    else if (typeof v === 'string') bytes += v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') bytes += String(v).length;
    else if (typeof v === 'object') {
      if (d > deepest) deepest = d;
      if (d > maxDepth) return { ok: false, bytes, depth: d, reason: 'depth' };
      bytes += 2;
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) {
          bytes += 1;
          stack.push({ v: v[i], d: d + 1 });
          if (bytes > maxBytes) break;
        }
      } else {
        for (const k in v as Record<string, unknown>) {
          if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
          bytes += k.length + 4;
          stack.push({ v: (v as Record<string, unknown>)[k], d: d + 1 });
          if (bytes > maxBytes) break;
        }
      }
    } else bytes += 4;
    if (bytes > maxBytes) return { ok: false, bytes, depth: deepest, reason: 'size' };
  }
  return { ok: true, bytes, depth: deepest };
}

/**
 * Size and depth of a raw JSON text, scanned without parsing (brackets outside strings). The
 * provider uses it before `JSON.parse`, so an over-deep or oversized tool input is never parsed.
 */
export function measureJsonText(text: string, maxBytes = MAX_TOOL_INPUT_BYTES, maxDepth = MAX_TOOL_INPUT_DEPTH): InputMeasure {
  if (text.length > maxBytes) return { ok: false, bytes: text.length, depth: 0, reason: 'size' };
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (depth > maxDepth) return { ok: false, bytes: text.length, depth, reason: 'depth' };
    } else if (c === 125 || c === 93) depth--;
  }
  return { ok: true, bytes: text.length, depth: deepest };
}

/**
 * Bounded input (issue 9 §3): every door's input — a model's tool call, an MCP call, a page's or
 * the CLI's verb call — is measured for size and depth (models/bounds.ts) before it is hashed,
 * stored, masked or validated. This module adds the digests that record a refused input's
 * identity without its content; the refusal's message and field issue (one wording for every
 * door) are in models/bounds.ts. Nothing recurses on input.
 */
import { createHash } from 'node:crypto';

export { MAX_TOOL_INPUT_BYTES, MAX_TOOL_INPUT_DEPTH, boundsIssue, boundsMessage, measureInput, measureJsonText, type InputMeasure } from '../../models/bounds';

/**
 * SHA-256 (hex) of `value`'s canonical JSON (object keys sorted), computed with an explicit stack:
 * safe for any depth, linear in size. Used to record a refused input's identity without its content.
 */
export function digestInput(value: unknown): string {
  const h = createHash('sha256');
  type Frame = { kind: 'value'; v: unknown } | { kind: 'lit'; s: string };
  const stack: Frame[] = [{ kind: 'value', v: value }];
  let buf = '';
  const out = (s: string) => {
    buf += s;
    if (buf.length > 65536) {
      h.update(buf);
      buf = '';
    }
  };
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f.kind === 'lit') {
      out(f.s);
      continue;
    }
    const v = f.v;
    if (v === null || v === undefined || typeof v !== 'object') {
      out(JSON.stringify(v ?? null) ?? 'null');
      continue;
    }
    if (Array.isArray(v)) {
      stack.push({ kind: 'lit', s: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ kind: 'value', v: v[i] });
        if (i > 0) stack.push({ kind: 'lit', s: ',' });
      }
      stack.push({ kind: 'lit', s: '[' });
      continue;
    }
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    stack.push({ kind: 'lit', s: '}' });
    for (let i = keys.length - 1; i >= 0; i--) {
      stack.push({ kind: 'value', v: o[keys[i]!] });
      stack.push({ kind: 'lit', s: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` });
    }
    stack.push({ kind: 'lit', s: '{' });
  }
  h.update(buf);
  return h.digest('hex');
}

/** SHA-256 (hex) of a text, e.g. a refused tool input's raw JSON. */
export function digestText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

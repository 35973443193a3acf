/**
 * Cost of one model response from `@pydantic/genai-prices` (bundled data; no network), with the
 * price source, its version and the prices applied recorded on the usage row for audit
 * (kinetix.md §5; frozen contract "genai-prices is primary … pricing pinned").
 */
import { calcPrice } from '@pydantic/genai-prices';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Token counts of one response. `inputTokens` excludes cache reads/writes (Anthropic's convention). */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export const PRICE_SOURCE = '@pydantic/genai-prices';

function packageVersion(): string {
  try {
    const main = createRequire(import.meta.url).resolve('@pydantic/genai-prices');
    const pkg = JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `<package version>+bundled` (the price data shipped inside that package version). */
export const PRICE_VERSION = `${packageVersion()}+bundled`;

/** USD cost of one response, or null when the model has no price; `snapshot` = the per-million-token prices applied. */
export function costOf(providerId: string, model: string, t: TokenCounts, at?: Date): { costUsd: number | null; snapshot: Record<string, unknown> | null } {
  try {
    // genai-prices counts input_tokens as the total including cache reads and writes.
    const usage = {
      input_tokens: t.inputTokens + t.cacheReadTokens + t.cacheWriteTokens,
      output_tokens: t.outputTokens,
      cache_read_tokens: t.cacheReadTokens,
      cache_write_tokens: t.cacheWriteTokens,
    };
    const r = calcPrice(usage, model, at ? { providerId, timestamp: at } : { providerId });
    if (!r) return { costUsd: null, snapshot: null };
    return { costUsd: r.total_price, snapshot: { provider: r.provider.id, model: r.model.id, prices: JSON.parse(JSON.stringify(r.model_price)) as unknown } };
  } catch {
    return { costUsd: null, snapshot: null };
  }
}

/**
 * Price ceiling for a response whose model has no price (issue 9 §12: unknown cost never counts
 * as $0). USD per million tokens: the highest list prices Anthropic publishes for its Claude
 * models (Claude Opus 4 / 4.1: $15 input, $75 output, $18.75 cache write, $1.50 cache read;
 * https://www.anthropic.com/pricing, 2025). No Claude model costs more, so a budget that counts
 * an unpriced response at this ceiling is never overspent because of it.
 */
export const PRICE_CEILING_PER_MTOK = { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5 } as const;

/** USD cost of `t` at {@link PRICE_CEILING_PER_MTOK}. */
export function ceilingCostOf(t: TokenCounts): number {
  const c = PRICE_CEILING_PER_MTOK;
  return (t.inputTokens * c.input + t.outputTokens * c.output + t.cacheWriteTokens * c.cacheWrite + t.cacheReadTokens * c.cacheRead) / 1_000_000;
}

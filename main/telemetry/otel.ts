/**
 * OpenTelemetry export (kinetix.md §8): when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, a tracer provider with the OTLP/HTTP exporter is
 * registered globally, so the spans the harness already emits (runs, model calls, tool calls,
 * policy decisions, applies) leave the process. Without the variable nothing is registered and
 * every span is a no-op.
 *
 * Content capture is off by default: spans carry ids, names, statuses, counts and policy codes,
 * never message text, tool arguments or results. `KINETIX_OTEL_CAPTURE_CONTENT=true` (or the
 * GenAI convention's `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`) adds tool
 * arguments with secrets masked. As a last line, the exporter is wrapped so that any attribute
 * whose key names a secret is masked and any known secret string (the provider key, anything
 * shaped like an Anthropic key) is scrubbed from every string attribute before it is sent.
 */
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { isSecretKey, MASK, scrubText } from '../kinetix/mask';

/** What an attribute reads as once masked: the app's one mask (kinetix/mask.ts). */
export const OTEL_MASK = MASK;

/** Handle of the registered provider. */
export interface TelemetryHandle {
  endpoint: string;
  /** Export everything buffered now. */
  forceFlush(): Promise<void>;
  /** Flush, stop exporting and unregister the global provider. */
  shutdown(): Promise<void>;
}

let current: TelemetryHandle | null = null;

/** True when span content capture (masked tool arguments) was switched on. Default off. */
export function telemetryCapturesContent(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.KINETIX_OTEL_CAPTURE_CONTENT === 'true' || env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true';
}

/** The OTLP/HTTP traces URL from the environment, or null when export is not configured. */
export function tracesEndpoint(env: NodeJS.ProcessEnv = process.env): string | null {
  const direct = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (direct) return direct;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return null;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * Mask secret-named attributes and scrub known secrets and credential-shaped text from string
 * values. The rules are the app's one redactor (kinetix/mask.ts: {@link isSecretKey},
 * {@link scrubText}), so a span can never show what a stored row would not.
 */
export function redactAttributes<T extends Record<string, unknown>>(attrs: T, secrets: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(attrs)) {
    if (isSecretKey(k)) out[k] = OTEL_MASK;
    else if (typeof v === 'string') out[k] = scrub(v, secrets);
    else if (Array.isArray(v)) out[k] = v.map((x) => (typeof x === 'string' ? scrub(x, secrets) : x));
    else out[k] = v;
  }
  return out as T;
}

function scrub(s: string, secrets: readonly string[]): string {
  return scrubText(s, secrets);
}

/** A span exporter that redacts every span (attributes and event attributes) before delegating. */
export class RedactingSpanExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly secrets: () => readonly string[],
  ) {}

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    const secrets = this.secrets().filter((s): s is string => typeof s === 'string' && s.length >= 6);
    const redacted = spans.map((s) => {
      const c = Object.create(s) as ReadableSpan;
      Object.defineProperty(c, 'attributes', { value: redactAttributes(s.attributes, secrets) });
      Object.defineProperty(c, 'events', {
        value: s.events.map((e) => ({ ...e, ...(e.attributes ? { attributes: redactAttributes(e.attributes, secrets) } : {}) })),
      });
      Object.defineProperty(c, 'name', { value: scrub(s.name, secrets) });
      return c;
    });
    this.inner.export(redacted, done);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Options of {@link initTelemetry}. */
export interface TelemetryOptions {
  /** Export each span as it ends (tests, the CLI); default batches. */
  simple?: boolean;
  /** One-line log sink (never given a secret). */
  log?: (line: string) => void;
  serviceName?: string;
}

/**
 * Register the OTLP/HTTP tracer provider when an endpoint is configured in `env`. Idempotent:
 * the first registration in the process wins and is returned again. Returns null (nothing
 * registered) when no endpoint is set or registration fails (logged; the app runs on).
 */
export function initTelemetry(env: NodeJS.ProcessEnv = process.env, opts: TelemetryOptions = {}): TelemetryHandle | null {
  if (current) return current;
  const endpoint = tracesEndpoint(env);
  if (!endpoint) return null;
  try {
    const exporter = new RedactingSpanExporter(new OTLPTraceExporter({ url: endpoint }), () => [env.ANTHROPIC_API_KEY ?? ''].filter(Boolean));
    const processor = opts.simple || env.KINETIX_OTEL_SIMPLE === 'true' ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': opts.serviceName ?? env.OTEL_SERVICE_NAME ?? 'athlete-intelligence' }),
      spanProcessors: [processor],
    });
    if (!trace.setGlobalTracerProvider(provider)) {
      opts.log?.('telemetry: a tracer provider was already registered; OTLP export not added');
      void provider.shutdown();
      return null;
    }
    const handle: TelemetryHandle = {
      endpoint,
      forceFlush: () => provider.forceFlush(),
      shutdown: async () => {
        await provider.shutdown();
        trace.disable();
        if (current === handle) current = null;
      },
    };
    current = handle;
    // Flush what is buffered when the event loop drains (a batch would otherwise be lost at exit).
    process.once('beforeExit', () => {
      if (current === handle) void provider.forceFlush().catch(() => {});
    });
    return handle;
  } catch (e) {
    opts.log?.(`telemetry: could not start OTLP export (${e instanceof Error ? e.name : 'error'}); continuing without it`);
    return null;
  }
}

/** The registered telemetry handle, if any. */
export function currentTelemetry(): TelemetryHandle | null {
  return current;
}

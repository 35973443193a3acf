/**
 * The tool contract (kinetix.md §1): one definition per tool, shared by the assistant, the MCP
 * server and the eval set. Reads run directly; writes only *plan* (they return a proposal that
 * carries the changeset) and are applied after a human approves. The JSON Schema the model sees
 * is generated from the zod input, so the schema and the validation can never disagree.
 */
import { z } from 'zod';
import type { PlannedChangeset } from '../../models/changeset';
import type { Permission } from '../../models/roles';
import type { Classification } from '../../models/classification';
import type { TableName } from '../../models/tables';
import type { ServiceContext } from '../services/context';

/**
 * Blast radius. `read` runs at once; `write` and `bulk` pause for a human; `destructive` tools
 * are registered but never offered to the assistant or MCP clients.
 */
export type Risk = 'read' | 'write' | 'bulk' | 'destructive';

/** What a tool's handler receives besides its (unmasked, validated) input. */
export interface ToolContext {
  /** Service context for this call: the run's user, `via.runId`, and a capability narrowed to the tool's scopes. */
  service: ServiceContext;
  runId: string;
  conversationId: string;
  orgId: string;
  userId: string;
  /** The app page the user is on (e.g. `/athletes/0193…`), or null. */
  page: string | null;
  /** Emit a UI-only custom event (e.g. navigation for `open_page`); persisted like every event. */
  emit(name: string, value: unknown): void;
}

/**
 * What a write tool proposes for approval. `changeset` is the row-level diff (with versions
 * read) shown in the confirm dialog and applied unchanged after approval.
 */
export interface Proposal {
  summary: string;
  changeset?: PlannedChangeset;
  /** Values to show the user once after apply (e.g. a new device key); never persisted, never sent to the model. */
  reveal?: Record<string, string>;
  /** Anything else the tool needs to apply (kept in memory only). */
  state?: unknown;
}

interface ToolBase<S extends z.ZodType> {
  /** snake_case verb name the model calls (`list_athletes`). */
  name: string;
  /** What a busy clinician reads in the confirm dialog; never more reassuring than the handler. */
  title: string;
  /** For the model. */
  description: string;
  input: S;
  /**
   * What a read returns (a verb's output schema from models/verbs.ts), listed to MCP clients as
   * `outputSchema`. Absent for writes (they return a proposal) and for tools without one.
   */
  output?: z.ZodType;
  /** Role-map permission gating the tool: offered, and run, only if the role holds it. */
  permission: Permission;
  /** What the per-call capability is narrowed to (`rates:read`). */
  scopes: readonly string[];
  risk: Risk;
  /**
   * Tables whose rows the result may contain, for data classification; `'unknown'` (the
   * default) applies every table's tags (fail closed).
   */
  tables: readonly TableName[] | 'unknown';
  /**
   * `false` for a tool whose output comes from a source the clinic does not control (an MCP or
   * OpenAPI integration a user registered). Once such output enters a run, the run's high-privilege
   * tools are dropped (the untrusted-content gate, see gate.ts). Default (absent): trusted.
   */
  trusted?: boolean;
  /**
   * `true` for a tool whose output carries record text (free text people typed into records: notes,
   * clinician notes, RTP criteria; see classification.ts `RECORD_TEXT_FIELDS`). Like an untrusted
   * integration's output, it closes the untrusted-content gate of the run (issue 9 §6); unlike it,
   * it comes from this clinic's own database, so MCP clients may be offered the tool.
   */
  recordText?: boolean;
  /**
   * Classes of input fields of this tool that are neither a column of its tables nor listed in
   * classification.ts `INPUT_FIELD_CLASSIFICATION` (an integration's own fields). An input field
   * with no class at all is treated as above every clearance: a read tool filtering on it is
   * refused, and it is withheld when the arguments are replayed (fail closed).
   */
  inputClasses?: Readonly<Record<string, Classification>>;
  /**
   * Classes of result fields of this tool that are neither a column of its tables nor listed in
   * classification.ts `RESULT_FIELD_CLASSIFICATION` (an integration's own fields). A result field
   * with no class at all (numbers and lists of numbers included) is withheld from every model
   * provider (fail closed, issue 9 §12).
   */
  outputClasses?: Readonly<Record<string, Classification>>;
}

/** A tool that reads and returns data; runs without confirmation. */
export interface ReadTool<S extends z.ZodType = z.ZodType> extends ToolBase<S> {
  kind: 'read';
  run(ctx: ToolContext, input: z.infer<S>): unknown;
}

/**
 * A tool that changes data: `plan` writes nothing and returns the changeset; after a human
 * approves, the harness applies that stored changeset (proposals.ts), never the tool.
 */
export interface WriteTool<S extends z.ZodType = z.ZodType> extends ToolBase<S> {
  kind: 'write';
  plan(ctx: ToolContext, input: z.infer<S>): Proposal;
}

/** Any tool of the registry. */
export type Tool = ReadTool | WriteTool;

/** JSON Schema (object) the model receives for a tool's input. */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [k: string]: unknown };

const NAME_RE = /^[a-z][a-z0-9_]{1,63}$/;

type ReadSpec<S extends z.ZodType> = Omit<ReadTool<S>, 'kind' | 'scopes' | 'tables' | 'risk'> & {
  scopes?: readonly string[];
  tables?: ToolBase<S>['tables'];
  risk?: 'read';
};
type WriteSpec<S extends z.ZodType> = Omit<WriteTool<S>, 'kind' | 'scopes' | 'tables' | 'risk'> & {
  scopes?: readonly string[];
  tables?: ToolBase<S>['tables'];
  risk: Exclude<Risk, 'read'>;
};

/**
 * Define a tool. Defaults: scopes = the permission written `area:verb`; tables = `'unknown'`.
 * @throws Error on a malformed definition (bad name, empty title) — a programming error.
 */
export function defineTool<S extends z.ZodType>(spec: ReadSpec<S> & { kind: 'read' }): ReadTool<S>;
export function defineTool<S extends z.ZodType>(spec: WriteSpec<S> & { kind: 'write' }): WriteTool<S>;
export function defineTool<S extends z.ZodType>(spec: (ReadSpec<S> & { kind: 'read' }) | (WriteSpec<S> & { kind: 'write' })): Tool {
  if (!NAME_RE.test(spec.name)) throw new Error(`Tool name "${spec.name}" must be snake_case (a-z, 0-9, _), 2–64 characters.`);
  if (!spec.title.trim()) throw new Error(`Tool ${spec.name} needs a title.`);
  const scopes = spec.scopes ?? [spec.permission.replace('.', ':')];
  const tables = spec.tables ?? 'unknown';
  if (spec.kind === 'read') return { ...spec, risk: 'read', scopes, tables } as ReadTool;
  return { ...spec, scopes, tables } as WriteTool;
}

const schemaCache = new WeakMap<z.ZodType, JsonSchemaObject>();

/** The JSON Schema sent to the model, generated from the zod input (input side of defaults; no `$schema`). */
export function toolInputSchema(tool: Pick<Tool, 'input' | 'name'>): JsonSchemaObject {
  const hit = schemaCache.get(tool.input);
  if (hit) return hit;
  const js = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete js.$schema;
  if (js.type !== 'object') throw new Error(`Tool ${tool.name}: input must be an object schema.`);
  const out = js as JsonSchemaObject;
  schemaCache.set(tool.input, out);
  return out;
}

/** Each top-level input field's schema default (`{ status: 'all' }`): a filter left at its default filters nothing. */
export function toolInputDefaults(tool: Pick<Tool, 'input' | 'name'>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(toolInputSchema(tool).properties ?? {}))
    if (v && typeof v === 'object' && 'default' in v) out[k] = (v as { default: unknown }).default;
  return out;
}

/** A read tool's declared output as it travels in MCP structured content (always a JSON object). */
interface OutputShape {
  /** The JSON Schema listed as `outputSchema`. */
  schema: JsonSchemaObject;
  /** True when the result travels as `{ result: value }` (see {@link toolOutputWrapped}). */
  wrapped: boolean;
}

const outputCache = new WeakMap<z.ZodType, OutputShape>();

function outputShape(tool: Pick<Tool, 'output' | 'kind'>): OutputShape | null {
  if (tool.kind !== 'read' || !tool.output) return null;
  const hit = outputCache.get(tool.output);
  if (hit) return hit;
  const js = z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  delete js.$schema;
  // The one rule: only a schema whose top level is `type: "object"` (and nothing else that could
  // admit a non-object, such as a union or null) travels bare; every other shape — arrays, unions
  // (oneOf/anyOf), nullable objects, scalars — is wrapped as `{ result }`.
  const bare = js.type === 'object' && js.oneOf === undefined && js.anyOf === undefined && js.allOf === undefined;
  let shape: OutputShape;
  if (bare) shape = { schema: js as JsonSchemaObject, wrapped: false };
  else {
    // Definitions stay at the document root, where `#/$defs/…` references resolve.
    const { $defs, ...inner } = js;
    shape = {
      schema: { type: 'object', properties: { result: inner }, required: ['result'], additionalProperties: false, ...($defs ? { $defs } : {}) },
      wrapped: true,
    };
  }
  outputCache.set(tool.output, shape);
  return shape;
}

/**
 * The JSON Schema of a read tool's result (output side) as listed to MCP clients (`outputSchema`),
 * or null when it has none (writes, and reads without a declared output). MCP structured content
 * is always an object, so a result whose schema is not a plain object schema is described as
 * `{ result: <schema> }` ({@link toolOutputWrapped}).
 */
export function toolOutputSchema(tool: Pick<Tool, 'output' | 'kind'>): JsonSchemaObject | null {
  return outputShape(tool)?.schema ?? null;
}

/**
 * Whether a tool's result travels wrapped as `{ result }`: true exactly when its declared output
 * schema is not a plain object schema. The one rule both the listed `outputSchema`
 * ({@link toolOutputSchema}) and the structured content ({@link toolStructuredContent}) follow.
 */
export function toolOutputWrapped(tool: Pick<Tool, 'output' | 'kind'>): boolean {
  return outputShape(tool)?.wrapped ?? false;
}

/**
 * A tool result as MCP structured content: `{ result: value }` when {@link toolOutputWrapped},
 * the value itself when it is a JSON object, and undefined otherwise (a tool without a declared
 * output whose result is not an object: text content only).
 */
export function toolStructuredContent(tool: Pick<Tool, 'output' | 'kind'>, value: unknown): Record<string, unknown> | undefined {
  if (toolOutputWrapped(tool)) return { result: value ?? null };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  return undefined;
}

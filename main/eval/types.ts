/**
 * The eval's case format. A case is one user request in the demo club with what must come of it:
 * the changesets allowed to reach the human (and whether the human approves each), what the answer
 * must say, and the database effects; everything else the database shows afterwards is a
 * forbidden effect. Injection cases also plant hostile text (record text, help text, tool output)
 * and list what the adversarial model tries after reading it.
 */
import type { RowChange } from '../../models/changeset';
import type { Role } from '../../models/roles';
import type { Tool } from '../kinetix/tool';
import type { RunOutcome } from '../kinetix';
import type { RowEffect } from './db-state';
import type { Script, Step } from './model';
import type { World } from './world';

/** One row of a changeset as the human is shown it (a delete shows no `after`: it is empty here). */
export interface ShownRow {
  op: RowChange['op'];
  table: string;
  id: string;
  after: Record<string, unknown>;
  before?: Record<string, unknown>;
}

/** A changeset the human may be shown, and what the human does with it. */
export interface ExpectedProposal {
  /** The tool that proposes it. */
  tool: string;
  /** Exact number of rows. */
  rows: number;
  /** Every row must satisfy this (table, op, values). */
  row?: (c: ShownRow) => boolean;
  /** The human's decision. Default `approve`. */
  decision?: 'approve' | 'decline';
  /**
   * What must come of an approval: `applied` (default), `conflict` (the preview went stale:
   * nothing written), `needs_owner` (it waits for an owner; nothing written in the run).
   */
  outcome?: 'applied' | 'conflict' | 'needs_owner';
  /** For `needs_owner`: what the owner does in the app after the run. Default `decline`. */
  owner?: 'approve' | 'decline';
  /** Run just before the human decides (e.g. another user edits a row, making the preview stale). */
  beforeDecision?: (w: World) => void;
}

/** Where an injection is planted. */
export type InjectionSite = 'athlete_note' | 'injury_note' | 'wellness_note' | 'session_note' | 'help_page' | 'tool_output';

/** The attack techniques of the adversarial model (each maps to a defence in code). */
export type Technique =
  | 'cross_org'
  | 'out_of_role'
  | 'destructive_name'
  | 'fabricated_name'
  | 'signoff_escalation'
  | 'over_50_records'
  | 'policy_limits'
  | 'stale_version'
  | 'self_approval'
  | 'tool_result_smuggling'
  | 'self_scope'
  | 'exfiltration'
  | 'in_role_unrequested';

/** An injection: hostile text and the adversarial model's attempts after it has read it. */
export interface Injection {
  site: InjectionSite;
  /** A piece of the planted text that must reach the model (else the case tests nothing). Omit when it must not. */
  reaches?: string;
  /** What the planted text tells the assistant to do. */
  goal: string;
  /** The adversarial model's attack steps (tool calls a compromised model would make). */
  attacks: (w: World, c: CaseContext) => Step[];
  /** Techniques these attacks exercise (for the report's coverage table). */
  techniques: Technique[];
  /** Competent-script steps after which the injection has been read (attacks go there). Default 1. */
  surfaceAfter?: number;
  /**
   * Honest, in-role proposals the adversary's attempts may put in front of the human (the human
   * declines them). Only the human stands between these and the database; the report counts them.
   */
  mayShow?: (w: World, c: CaseContext) => ExpectedProposal[];
  /** With a follow-up turn: `2` when the adversary acts in the second turn (default: the first). */
  turn?: 1 | 2;
  /** Strings that must never appear in anything sent to the model (another org's data, secrets). */
  neverSent?: (w: World, c: CaseContext) => string[];
}

/** Values a case's setup hands to its script and checks. */
export type CaseContext = Record<string, unknown>;

/** Who asks. `unlinked_athlete`: the athlete account linked to no athlete. */
export type Asker = Role | 'unlinked_athlete';

/** One eval case. */
export interface EvalCase {
  id: string;
  kind: 'task' | 'injection';
  title: string;
  as: Asker;
  message: string | ((w: World, c: CaseContext) => string);
  page?: (w: World, c: CaseContext) => string;
  /** Plant data before the run (its writes are part of the baseline, not effects). */
  setup?: (w: World, c: CaseContext) => void;
  /** Extra tools registered for this case (e.g. an integration returning untrusted output). */
  extraTools?: (w: World, c: CaseContext) => Tool[];
  /** The competent model's script. */
  script: (w: World, c: CaseContext) => Script;
  /** A second turn in the same conversation (its answer is the one checked). */
  followUp?: { message: string; script: (w: World, c: CaseContext) => Script };
  /** Changesets allowed to reach the human, with the human's decision. Default none. */
  proposals?: (w: World, c: CaseContext) => ExpectedProposal[];
  /** Case-insensitive strings (or patterns) the final answer must contain (utility). */
  answer?: (w: World, c: CaseContext) => (string | RegExp)[];
  /** Extra checks after the run; each returned string is a failure. */
  check?: (w: World, c: CaseContext, r: CaseRunFacts) => string[];
  /** Run status the case expects. Default `completed`. */
  status?: RunOutcome['status'];
  injection?: Injection;
  /**
   * Set while the defence the case relies on is not in this build yet: the case runs and is
   * reported, but is left out of the totals and of the exit status.
   */
  pending?: string;
}

/** What a run produced, for checks. */
export interface CaseRunFacts {
  outcome: RunOutcome;
  effects: RowEffect[];
  /** Tool calls of the case's runs: name, status, refusal kind (see the runner). */
  toolCalls: { name: string; status: string; error: string | null }[];
  /** Every request body sent to the model, as JSON text. */
  sent: string;
  /** Each model request: the run's user message and the tools offered. */
  requests: { message: string; tools: string[] }[];
}

export type { Script, Step };

/**
 * Output schemas of every service verb (the `output` of each entry of models/verbs.ts). The
 * services are typed against them (a verb that returns another shape does not compile), tests
 * parse every verb's real output with them, and the tool catalogue and MCP describe results
 * with them. Field descriptions (`.describe()`) reach the model and MCP clients.
 *
 * Runtime-agnostic: zod only, no node:*, no DOM.
 */
import { z } from 'zod';
import * as R from './records';
import { POSE_JOINTS, POSE_SIDES } from './capture/metrics';
import { AngleSeries } from './capture/series';
import { TABLE_NAMES } from './tables';

const total = z.number().int().min(0).describe('Rows matching the filter (all pages).');

// ---- Changesets ----
const Values = z.record(z.string(), z.unknown());
const Table = z.enum(TABLE_NAMES).describe('Table the row belongs to.');
/** One row change of a changeset (models/changeset.ts `RowChange`). */
export const RowChangeOut = z.discriminatedUnion('op', [
  z.object({ op: z.literal('insert'), table: Table, id: z.string(), after: Values.describe('Every business column of the new row.') }),
  z.object({
    op: z.literal('update'),
    table: Table,
    id: z.string(),
    version: z.number().int().describe('Row version the change was planned against.'),
    before: Values,
    after: Values,
  }),
  z.object({ op: z.literal('delete'), table: Table, id: z.string(), version: z.number().int() }),
]);

/** An applied changeset as callers see it. */
export const AppliedChangesetOut = z.object({
  id: z.string().describe('Changeset id (the Undo handle).'),
  verb: z.string().describe('Service verb that planned it.'),
  summary: z.string().describe('One line for the activity log.'),
  changes: z.array(RowChangeOut),
  versions: z.record(z.string(), z.number().int()).describe('Row id → version after apply.'),
  activity_id: z.string(),
  applied_at: z.string().describe('ISO 8601 timestamp.'),
  replayed: z.boolean().describe('True when an idempotent retry returned the first result.'),
});
export type AppliedChangesetOut = z.infer<typeof AppliedChangesetOut>;

/** What every write verb returns when applied at once (pages, CLI). */
export const WriteOutput = z.object({
  changeset: AppliedChangesetOut,
  reveal: z.record(z.string(), z.string()).optional().describe('Values shown once after apply and never stored (e.g. a new device API key).'),
});
export type WriteOutput = z.infer<typeof WriteOutput>;

/** A stored changeset (activity view, Undo). */
export const StoredChangesetOut = z.object({
  id: z.string(),
  verb: z.string(),
  summary: z.string(),
  changes: z.array(RowChangeOut),
  status: z.string(),
  run_id: z.string().nullable().describe('Assistant run that proposed it, if any.'),
  via_assistant: z.boolean(),
  applied_at: z.string().nullable(),
  undo_of: z.string().nullable().describe('Changeset this one reverses.'),
  undone_by: z.string().nullable().describe('Changeset that reversed this one.'),
});

// ---- Athletes, squads ----
export const AthleteList = z.object({ total, athletes: z.array(R.Athlete).describe('Athletes, by name.') });
export const SquadWithCount = R.Squad.extend({ athlete_count: z.number().int().min(0).describe('Active athletes in the squad.') });
export const SquadList = z.array(SquadWithCount);

// ---- Clinical ----
export const InjuryList = z.object({ total, injuries: z.array(R.Injury).describe('Injuries, newest onset first.') });
export const InjuryWithRtp = R.Injury.extend({ rtp_entries: z.array(R.RtpEntry).describe('RTP entries of this injury, oldest first.') });
export const ScreeningList = z.object({ total, screenings: z.array(R.Screening).describe('Screening results, newest first.') });
export const RtpList = z.object({ total, rtp_entries: z.array(R.RtpEntry).describe('RTP entries, newest first.') });
export const WellnessList = z.object({ total, wellness: z.array(R.Wellness).describe('Daily wellness, newest first.') });
export const VitalsList = z.object({ total, vitals: z.array(R.Vitals).describe('Daily vitals, newest first.') });

// ---- Workload ----
export const SessionList = z.object({ total, sessions: z.array(R.TrainingSession).describe('Training sessions, newest first.') });
export const LoadList = z.object({ total, loads: z.array(R.SessionLoad).describe('Session loads (AU = RPE × minutes), newest first.') });
/** One ACWR computation (models/acwr.ts `AcwrResult`). */
export const AcwrResultOut = z.object({
  method: z.enum(['rolling', 'ewma']).describe('rolling = 7-day / 28-day rolling averages; ewma = exponentially weighted moving averages.'),
  as_of: z.string().describe('Date computed for (YYYY-MM-DD).'),
  acute_window_days: z.number().int(),
  chronic_window_days: z.number().int(),
  days_of_data: z.number().int().describe('Days of the 28-day chronic window with at least one recorded load (0..28).'),
  acute_days_of_data: z.number().int().describe('Days of the 7-day acute window with at least one recorded load (0..7).'),
  acute_coverage: z.number().describe('Share of the acute window with a recorded load (0..1). State it beside the ratio.'),
  chronic_coverage: z.number().describe('Share of the chronic window with a recorded load (0..1). State it beside the ratio.'),
  history_days: z.number().int().describe('Calendar days from the first recorded load to as_of (0 without loads).'),
  coverage_rule: z.string().describe('The coverage a ratio needs, in words; below it status is insufficient_data.'),
  status: z.enum(['ok', 'insufficient_data', 'zero_chronic']),
  acute_au: z.number().nullable().describe('Acute load, AU/day; null unless status is ok or zero_chronic.'),
  chronic_au: z.number().nullable().describe('Chronic load, AU/day.'),
  ratio: z.number().nullable().describe('Acute:chronic ratio; null when it cannot be computed.'),
  note: z.string().describe('Plain-language explanation to show beside the number.'),
});
export const AcwrOut = z.object({
  athlete_id: z.string(),
  athlete_name: z.string(),
  as_of: z.string(),
  results: z.array(AcwrResultOut),
});

// ---- Fee schedule ----
export const RateSchedule = z.object({
  folders: z.array(R.RateFolder.extend({ items: z.array(R.RateItem) })).describe('Folders by name, each with its items by code (prices in USD cents).'),
});
export const RateFolderList = z.object({ folders: z.array(R.RateFolder) });
export const RateItemList = z.object({ items: z.array(R.RateItem).describe('Items by code (prices in USD cents).') });

// ---- Capture ----
/** A pose reading with every condition it was measured under (what `pose.getMetrics` returns per reading). */
export const PoseMetricOut = R.PoseMetric.pick({
  id: true,
  capture_session_id: true,
  joint: true,
  side: true,
  statistic: true,
  value_deg: true,
  omitted_reason: true,
  camera_count: true,
  camera_mode: true,
  view_obliquity_deg: true,
  obliquity_band: true,
  view_matches_declared: true,
  coverage: true,
  trustworthy: true,
  sagittal_ratio: true,
  frames: true,
  conditions: true,
});
export type PoseMetricOut = z.infer<typeof PoseMetricOut>;
export const PoseMetricsOut = z.object({
  athlete_id: z.string(),
  metrics: z
    .array(PoseMetricOut)
    .describe(
      'Readings, newest first; value_deg in degrees, null when omitted (omitted_reason says why); conditions lists each failed quality check with what to do — state them before the number.',
    ),
  caveats: z.array(z.string()).describe('What has not been measured about these readings; show them with the numbers.'),
});
/** A capture session without its angle time series (which only `capture.getResults` returns). */
export const CaptureSessionOut = R.CaptureSession.omit({ angle_series: true });
export const CaptureSessionList = z.object({
  total,
  sessions: z.array(CaptureSessionOut).describe('Capture sessions, newest first (without their time series).'),
});
const PeakOut = z.object({
  joint: z.enum(POSE_JOINTS),
  side: z.enum(POSE_SIDES),
  peak_deg: z.number().nullable().describe('Degrees; null when the joint had no valid frame in the repetition.'),
});
/** What `capture.listRigs` returns. */
export const RigList = z.object({
  rigs: z.array(R.Rig.extend({ cameras: z.array(R.Camera).describe("The rig's cameras by name.") })).describe('Rigs by name.'),
});
/** What `capture.getResults` returns. */
export const CaptureResultsOut = z.object({
  session: CaptureSessionOut,
  metrics: z.array(PoseMetricOut).describe('Readings of this session with their conditions; value_deg null when omitted (omitted_reason says why).'),
  series: AngleSeries.nullable().describe('Joint angles per frame (degrees); null when the session stored none.'),
  repetitions: z.object({
    basis: z
      .object({ joint: z.enum(POSE_JOINTS), side: z.enum(POSE_SIDES) })
      .nullable()
      .describe('The series the repetitions were found in.'),
    repetitions: z
      .array(
        z.object({
          index: z.number().int(),
          start_frame: z.number().int(),
          peak_frame: z.number().int(),
          end_frame: z.number().int(),
          peaks: z.array(PeakOut),
        }),
      )
      .describe('Repetitions (peaks of at least 20° prominence, 0.4 s apart) with each joint’s peak in them.'),
  }),
  previous: z
    .object({ session: CaptureSessionOut, metrics: z.array(PoseMetricOut) })
    .nullable()
    .describe("The athlete's previous complete session of the same test, or null."),
  caveats: z.array(z.string()).describe('What has not been measured about these readings; show them with the numbers.'),
});

// ---- Admin ----
export const DeviceOut = R.Device.omit({ api_key_hash: true });
export const DeviceList = z.object({ devices: z.array(DeviceOut).describe('Devices by name (never their keys).') });
export const ReportSummary = R.Report.omit({ markdown: true });
export const ReportList = z.object({ reports: z.array(ReportSummary).describe('Reports this role may read (without their Markdown).') });
export const UserOut = R.User.omit({ pin_hash: true }).extend({
  has_pin: z.boolean().describe('True when a sign-in PIN is set (the PIN itself and its hash are never returned).'),
});
export const UserList = z.object({ users: z.array(UserOut).describe('Users by name (never credentials).') });
export const ActivityList = z.object({ activity: z.array(R.Activity).describe('Changes, newest first.') });

// ---- Help ----
/** One relevant help passage. */
export const HelpPassageOut = z.object({
  slug: z.string(),
  version: z.string(),
  anchor: z.string(),
  title: z.string(),
  heading: z.string(),
  snippet: z.string(),
  score: z.number(),
  link: z.string().describe('`/help/<slug>#<anchor>`.'),
  show_me: z.string().describe('App path for "Show me" (`:id` = an athlete id to fill in).'),
});
export type HelpPassageOut = z.infer<typeof HelpPassageOut>;
export const HelpSearchOut = z.discriminatedUnion('covered', [
  z.object({ covered: z.literal(true), query: z.string(), passages: z.array(HelpPassageOut) }),
  z.object({ covered: z.literal(false), query: z.string(), passages: z.tuple([]), note: z.string().describe('Say this rather than guessing.') }),
]);
export const HelpPageOut = z.object({
  slug: z.string(),
  version: z.string(),
  title: z.string(),
  app_path: z.string().describe('App path for "Show me".'),
  body: z.string().describe('Markdown; headings carry `{#anchor}`.'),
  sections: z.array(z.object({ anchor: z.string(), heading: z.string() })),
  current: z.boolean().describe('False when an older version was asked for.'),
});
export const HelpPageList = z.object({
  pages: z.array(z.object({ slug: z.string(), version: z.string(), title: z.string(), app_path: z.string(), sections: z.number().int() })),
});

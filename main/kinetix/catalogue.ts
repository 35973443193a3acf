/**
 * The assistant's tool catalogue: one tool per service verb (reads run at once, writes pause for
 * approval) plus the harness's own UI tool `open_page`. This is what the app, the MCP server and
 * the eval set load; `available(role)` / `availableEnabled` narrow it per run.
 */
import { z } from 'zod';
import { Forbidden } from '../../models/errors';
import { VERBS } from '../services';
import type { Verb } from '../services/verb';
import { KINETIX_EVENTS } from './events';
import { ToolRegistry } from './registry';
import type { Tool } from './tool';
import { defineTool } from './tool';
import { toolsFromVerbs } from './verb-tools';

/**
 * App routes `open_page` may navigate to: an absolute in-app path, no scheme, no `..`. A help
 * page's "Show me" path may be a template with `:id` (an athlete id), e.g. `/athletes/:id/workload`.
 */
const AppPath = z
  .string()
  .min(1)
  .max(200)
  .regex(/^\/[A-Za-z0-9\-_/.?=&%#:]*$/, 'an in-app path such as /athletes/<id>')
  .refine((p) => !p.includes('..') && !p.startsWith('//'), 'an in-app path such as /athletes/<id>')
  .refine((p) => !/:(?!id(?:\/|#|\?|$))/.test(p), 'the only template placeholder is :id (an athlete id)');

/** An athlete id in an app path (`/athletes/<id>…`), or null. */
function athleteIdOf(page: string | null): string | null {
  const m = /^\/athletes\/([A-Za-z0-9-]{1,64})(?:[/?#]|$)/.exec(page ?? '');
  return m?.[1] ?? null;
}

/**
 * The concrete path for a "Show me" path: `:id` is the given athlete, else the athlete of the page
 * the user is on, else the path falls back to the athletes list (where the user picks one).
 * Concrete paths are returned unchanged.
 */
export function resolveAppPath(path: string, athleteId: string | null | undefined, page: string | null): string {
  if (!path.includes(':id')) return path;
  const id = athleteId ?? athleteIdOf(page);
  return id ? path.replace(/:id/g, encodeURIComponent(id)) : '/athletes';
}

/** Navigates the user's app view (a UI action, not a data change). */
export const openPageTool = defineTool({
  kind: 'read',
  name: 'open_page',
  title: 'Open a page in the app',
  description:
    'Navigate the user\'s app to a page, e.g. /athletes/<id>, /athletes/<id>/injuries, /fees, /activity, /help/<slug>#<anchor>. Use for "show me" links (a help result\'s show_me path may contain :id: pass the athlete as athlete_id); it changes no data.',
  permission: 'kinetix.use',
  tables: [],
  input: z
    .object({
      path: AppPath.describe('In-app path starting with /; a help "show_me" template such as /athletes/:id/workload is accepted.'),
      athlete_id: z
        .string()
        .min(1)
        .max(64)
        .regex(/^[A-Za-z0-9-]+$/)
        .optional()
        .describe('The athlete whose page a :id template opens (default: the athlete page the user is on).'),
    })
    .strict(),
  run(ctx, input) {
    const path = resolveAppPath(input.path, input.athlete_id, ctx.page);
    ctx.emit(KINETIX_EVENTS.openPage, { path });
    return { opened: path };
  },
});

/**
 * A destructive tool: registered so that audits, tests and the eval set can name it, and never
 * offered (risk `destructive` is filtered out of every snapshot and every MCP listing). Even if it
 * were reached, its plan refuses: there is no hard-delete verb, and the row rules refuse a delete.
 */
export const deleteVideoTool = defineTool({
  kind: 'write',
  risk: 'destructive',
  name: 'delete_video',
  title: 'Permanently delete a video file (cannot be undone)',
  description: 'Deletes a stored capture video and its file.',
  permission: 'video.delete',
  tables: ['video'],
  input: z.object({ video_id: z.string().min(1).max(64) }).strict(),
  plan() {
    throw new Forbidden('Deleting videos is not available to the assistant or to MCP clients; nothing was changed.');
  },
});

/** Every tool for a verb registry (default: the service layer's VERBS) plus `open_page` and the never-offered `delete_video`. */
export function catalogueTools(verbs: ReadonlyMap<string, Verb> = VERBS): Tool[] {
  return [...toolsFromVerbs(verbs), openPageTool, deleteVideoTool];
}

/** A registry of the full catalogue. */
export function defaultToolRegistry(verbs: ReadonlyMap<string, Verb> = VERBS): ToolRegistry {
  return new ToolRegistry(catalogueTools(verbs));
}

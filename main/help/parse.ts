/**
 * Help pages: Markdown files under main/help/pages/ with a front-matter block and anchored
 * section headings. This module parses one page (pure, no I/O) and splits it into the sections
 * the help index searches.
 *
 * Page format:
 * ```
 * ---
 * slug: recording-an-injury        (kebab-case, unique)
 * version: 1.0                     (bump when the page's meaning changes)
 * title: Record an injury
 * path: /athletes/:id/injuries     (the app page "Show me" opens; `:id` = an athlete id)
 * ---
 * # Record an injury               (optional; the title is taken from front matter)
 * ## Before you start {#before-you-start}
 * …
 * ```
 * Every `##`/`###` heading carries an explicit `{#anchor}`; no text may precede the first one.
 */
import { AppError } from '../../models/errors';

/** One section of a page: a passage of the help index. */
export interface HelpSection {
  anchor: string;
  heading: string;
  /** Section body as plain text (Markdown markup removed), for the index and snippets. */
  text: string;
}

/** A parsed help page. */
export interface ParsedHelpPage {
  slug: string;
  version: string;
  title: string;
  /** App path for "Show me" (hash route without `#`, e.g. `/fees`, `/athletes/:id/workload`). */
  appPath: string;
  /** The Markdown body (front matter removed), headings still carrying their `{#anchor}`. */
  body: string;
  sections: HelpSection[];
}

/** A help page that breaks the format; the message names the file and the problem. */
export class HelpPageError extends AppError {
  constructor(message: string) {
    super({ code: 'Validation', message });
    this.name = 'HelpPageError';
  }
}

const SLUG_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const VERSION_RE = /^\d+\.\d+(?:\.\d+)?$/;
const ANCHOR_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const HEADING_RE = /^(#{2,3})\s+(.+?)\s*\{#([^}\s]+)\}\s*$/;

/** Markdown → plain text for indexing: drops emphasis, code ticks, link targets, table pipes, list markers. */
export function markdownToText(md: string): string {
  return md
    .split('\n')
    .map((line) =>
      line
        .replace(/^\s*\|?\s*-{3,}[\s|:-]*$/, '')
        .replace(/^\s*>\s?/, '')
        .replace(/^\s*(?:[-*+]|\d+\.)\s+/, '')
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/[*_`]+/g, '')
        .replace(/\s*\|\s*/g, ' · ')
        .replace(/^ · | · $/g, '')
        .trim(),
    )
    .filter((l) => l.length > 0)
    .join('\n');
}

function frontMatter(lines: string[], origin: string): { fields: Record<string, string>; rest: string[] } {
  if (lines[0]?.trim() !== '---') throw new HelpPageError(`${origin}: must start with a front-matter block (---).`);
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) throw new HelpPageError(`${origin}: front-matter block is not closed (---).`);
  const fields: Record<string, string> = {};
  for (const l of lines.slice(1, end)) {
    if (!l.trim()) continue;
    const m = /^([a-z_]+):\s*(.*)$/.exec(l.trim());
    if (!m) throw new HelpPageError(`${origin}: front-matter line "${l}" is not "key: value".`);
    fields[m[1]!] = m[2]!.replace(/^["']|["']$/g, '').trim();
  }
  return { fields, rest: lines.slice(end + 1) };
}

/**
 * Parse one help page. `origin` (e.g. the file name) is used in error messages; when it is a
 * `<slug>.md` name, the front-matter slug must match it.
 * @throws HelpPageError when the page breaks the format
 */
export function parseHelpPage(source: string, origin = 'help page'): ParsedHelpPage {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const { fields, rest } = frontMatter(lines, origin);
  const slug = fields.slug ?? '';
  const version = fields.version ?? '';
  const title = fields.title ?? '';
  const appPath = fields.path ?? '';
  if (!SLUG_RE.test(slug)) throw new HelpPageError(`${origin}: slug "${slug}" must be kebab-case (a-z, 0-9, -).`);
  if (origin.endsWith('.md') && !origin.endsWith(`${slug}.md`)) throw new HelpPageError(`${origin}: slug "${slug}" does not match the file name.`);
  if (!VERSION_RE.test(version)) throw new HelpPageError(`${origin}: version "${version}" must look like 1.0 or 1.2.3.`);
  if (!title) throw new HelpPageError(`${origin}: title is missing.`);
  if (!appPath.startsWith('/')) throw new HelpPageError(`${origin}: path "${appPath}" must be an app path starting with /.`);

  const sections: HelpSection[] = [];
  const seen = new Set<string>();
  let current: { anchor: string; heading: string; body: string[] } | null = null;
  const flush = () => {
    if (current) sections.push({ anchor: current.anchor, heading: current.heading, text: markdownToText(current.body.join('\n')) });
  };
  let inFence = false;
  for (const line of rest) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (!inFence && /^#{2,6}\s/.test(line)) {
      const m = HEADING_RE.exec(line);
      if (!m) throw new HelpPageError(`${origin}: heading "${line.trim()}" needs an explicit {#anchor} (## and ### only).`);
      const anchor = m[3]!;
      if (!ANCHOR_RE.test(anchor)) throw new HelpPageError(`${origin}: anchor "${anchor}" must be kebab-case.`);
      if (seen.has(anchor)) throw new HelpPageError(`${origin}: anchor "${anchor}" is used twice.`);
      seen.add(anchor);
      flush();
      current = { anchor, heading: m[2]!.trim(), body: [] };
      continue;
    }
    if (current) current.body.push(line);
    else if (line.trim() && !/^#\s/.test(line))
      throw new HelpPageError(`${origin}: text before the first "## Heading {#anchor}" is not allowed ("${line.trim().slice(0, 40)}").`);
  }
  flush();
  if (sections.length === 0) throw new HelpPageError(`${origin}: a page needs at least one "## Heading {#anchor}" section.`);
  const empty = sections.find((s) => !s.text);
  if (empty) throw new HelpPageError(`${origin}: section #${empty.anchor} is empty.`);
  return { slug, version, title, appPath, body: rest.join('\n').trim(), sections };
}

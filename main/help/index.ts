/**
 * The help pages shipped with this build, parsed once. Runtime code reads them from here; the
 * Markdown sources live in main/help/pages/ (see generate.ts).
 */
import { HELP_SOURCES } from './pages.generated';
import type { ParsedHelpPage } from './parse';
import { parseHelpPage } from './parse';

export type { HelpSection, ParsedHelpPage } from './parse';

let cache: readonly ParsedHelpPage[] | null = null;

/** Every shipped help page, parsed (sorted by slug). @throws HelpPageError if a shipped page is malformed */
export function shippedHelpPages(): readonly ParsedHelpPage[] {
  cache ??= HELP_SOURCES.map((s) => parseHelpPage(s.source, s.file)).sort((a, b) => a.slug.localeCompare(b.slug));
  return cache;
}

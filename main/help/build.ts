/**
 * Regenerate main/help/pages.generated.ts from main/help/pages/*.md, after checking every page
 * parses. Run: `npx tsx main/help/build.ts`.
 */
import { writeFileSync } from 'node:fs';
import { HELP_GENERATED_FILE, readHelpSources, renderGenerated } from './generate';
import { parseHelpPage } from './parse';

const sources = readHelpSources();
for (const s of sources) parseHelpPage(s.source, s.file);
writeFileSync(HELP_GENERATED_FILE, renderGenerated(sources));
console.log(`Wrote ${sources.length} help pages to ${HELP_GENERATED_FILE}`);

/**
 * `npm run bench:ui`: the clinic UI benchmark. Starts the web host on a fresh database with 5,000
 * synthetic athletes (`--seed-large`), signs a physio in through headless Chromium at 1280×800 and
 * measures:
 * - time to interactive of the athlete list: navigation start → the page's `ai:athletes:ready`
 *   performance mark (session check, the 5,000-row list call, first render), median of N reloads;
 * - search: keystroke → filtered count shown; scrolling: frame intervals while scrolling the list
 *   to the end; DOM rows present (virtualisation);
 * - renderer bundle size (raw and gzip) from out/renderer.
 * Writes the "Clinic UI" section of BENCHMARKS.md (use --no-write to only print).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { median, percentile, updateBenchmarksSection } from '../../main/bench/report';
import setup from '../fixtures/global-setup';
import { launchBrowser, newPage, startApp } from '../fixtures/app';
import { SignInPage, waitForPage } from '../pages/app';

const ATHLETES = Number(process.env.BENCH_ATHLETES ?? 5000);
const RELOADS = Number(process.env.BENCH_RELOADS ?? 7);
const HEADING = '## Clinic UI';

function bundle(): { file: string; raw: number; gzip: number }[] {
  const dir = join('out', 'renderer', 'assets');
  return readdirSync(dir)
    .filter((f) => /\.(js|css)$/.test(f))
    .map((f) => {
      const buf = readFileSync(join(dir, f));
      return { file: f, raw: statSync(join(dir, f)).size, gzip: gzipSync(buf, { level: 9 }).length };
    });
}

async function main(): Promise<void> {
  const write = !process.argv.includes('--no-write');
  setup();
  const app = await startApp({ args: ['--seed-large', String(ATHLETES)] });
  const browser = await launchBrowser();
  try {
    const { page } = await newPage(browser);
    const signIn = new SignInPage(page);
    await signIn.open(app.url);
    await signIn.signIn('physio@bench-club.test');
    await waitForPage(page, 'athletes');

    const tti: number[] = [];
    for (let i = 0; i < RELOADS; i++) {
      await page.reload();
      await waitForPage(page, 'athletes');
      const t = await page.evaluate(() => performance.getEntriesByName('ai:athletes:ready').at(-1)?.startTime ?? NaN);
      tti.push(t);
    }
    const count = (await page.locator('[data-testid="athlete-count"]').textContent()) ?? '';
    const domRows = await page.locator('.vrow').count();

    // Search: type a name fragment, time until the filtered count shows.
    const search = await page.evaluate(async () => {
      const input = document.querySelector<HTMLInputElement>('input[type="search"]')!;
      const counter = document.querySelector('[data-testid="athlete-count"]')!;
      const before = counter.textContent;
      const t0 = performance.now();
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
      setter.call(input, 'Wren');
      input.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise<void>((ok) => {
        const obs = new MutationObserver(() => {
          if (counter.textContent !== before) {
            obs.disconnect();
            ok();
          }
        });
        obs.observe(counter, { childList: true, characterData: true, subtree: true });
      });
      const ms = performance.now() - t0;
      setter.call(input, '');
      input.dispatchEvent(new Event('input', { bubbles: true }));
      return { ms, shown: counter.textContent };
    });

    // Scrolling: 120 frames scrolling the whole list; frame intervals from requestAnimationFrame.
    const frames = await page.evaluate(async () => {
      const el = document.querySelector<HTMLElement>('.vlist-scroller')!;
      await new Promise((r) => requestAnimationFrame(r));
      const steps = 120;
      const max = el.scrollHeight - el.clientHeight;
      const out: number[] = [];
      let last = performance.now();
      for (let i = 1; i <= steps; i++) {
        el.scrollTop = (max * i) / steps;
        await new Promise((r) => requestAnimationFrame(r));
        const now = performance.now();
        out.push(now - last);
        last = now;
      }
      return { intervals: out, rowsInDom: document.querySelectorAll('.vrow').length, atEnd: el.scrollTop >= max - 1 };
    });

    const files = bundle();
    const js = files.filter((f) => f.file.endsWith('.js'));
    const css = files.filter((f) => f.file.endsWith('.css'));
    const sum = (xs: { raw: number; gzip: number }[]) => ({ raw: xs.reduce((a, b) => a + b.raw, 0), gzip: xs.reduce((a, b) => a + b.gzip, 0) });
    const result = {
      athletes: ATHLETES,
      reloads: RELOADS,
      tti_ms: { median: median(tti), min: Math.min(...tti), max: Math.max(...tti), all: tti.map((x) => Math.round(x)) },
      count,
      dom_rows_at_rest: domRows,
      search_ms: search.ms,
      scroll: {
        frames: frames.intervals.length,
        median_ms: median(frames.intervals),
        p95_ms: percentile(frames.intervals, 95),
        max_ms: Math.max(...frames.intervals),
        rows_in_dom: frames.rowsInDom,
        reached_end: frames.atEnd,
      },
      bundle: { js: sum(js), css: sum(css) },
    };
    console.log(JSON.stringify(result, null, 2));
    if (write) writeSection(result, `Chromium ${browser.version()}`);
  } finally {
    await browser.close();
    await app.stop();
  }
}

type Result = {
  athletes: number;
  reloads: number;
  tti_ms: { median: number; min: number; max: number };
  count: string;
  dom_rows_at_rest: number;
  search_ms: number;
  scroll: { frames: number; median_ms: number; p95_ms: number; max_ms: number; rows_in_dom: number };
  bundle: { js: { raw: number; gzip: number }; css: { raw: number; gzip: number } };
};

function writeSection(r: Result, browserName: string): void {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const section = `${HEADING}

The athlete list in the built renderer (\`out/renderer\`), served by the web host, in headless Debian Chromium (playwright-core) at 1280×800, signed in as a physio of a synthetic club of ${r.athletes.toLocaleString('en-GB')} athletes (\`npm run web -- --seed-large ${r.athletes}\`). Time to interactive = navigation start → the page's \`ai:athletes:ready\` mark (session check, one \`athletes.list\` call of all ${r.athletes.toLocaleString('en-GB')} rows over HTTP, squads, first render of the virtualised list), on reload with a signed-in tab. Host, browser and other engineers' jobs share the same machine, so treat single figures as noisy.

Run: \`npm run bench:ui\`. Measured ${new Date().toISOString().slice(0, 10)} on ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${browserName} headless.

| measure | value | notes |
| --- | ---: | --- |
| time to interactive, athlete list (${r.athletes.toLocaleString('en-GB')} athletes) | ${r.tti_ms.median.toFixed(0)} ms median | min ${r.tti_ms.min.toFixed(0)}, max ${r.tti_ms.max.toFixed(0)} over ${r.reloads} reloads; list shows "${r.count}" |
| search "Wren" → filtered count shown | ${r.search_ms.toFixed(0)} ms | client-side filter of the loaded rows (deferred value) |
| scrolling the whole list, frame interval | ${r.scroll.median_ms.toFixed(1)} ms median, ${r.scroll.p95_ms.toFixed(1)} ms p95 | ${r.scroll.frames} frames, max ${r.scroll.max_ms.toFixed(1)} ms; ${r.scroll.rows_in_dom} rows in the DOM while scrolling, ${r.dom_rows_at_rest} at rest |
| renderer bundle, JavaScript | ${kb(r.bundle.js.raw)} (${kb(r.bundle.js.gzip)} gzip) | electron-vite's renderer build (minified) |
| renderer bundle, CSS | ${kb(r.bundle.css.raw)} (${kb(r.bundle.css.gzip)} gzip) | plain CSS, no framework |
`;
  const path = 'BENCHMARKS.md';
  updateBenchmarksSection(path, HEADING.slice(3), section);
  console.log(`bench: wrote the "${HEADING.slice(3)}" section of ${path}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

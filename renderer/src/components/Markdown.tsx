/**
 * The one Markdown pipeline of the renderer, for help pages and the assistant's answers:
 * react-markdown with remark-gfm (tables, lists, strikethrough, autolinks). It builds React
 * elements, never HTML strings: raw HTML in the source is shown as text, images are dropped (a
 * model's answer must not make the app fetch a URL), and links are safe by construction: an
 * in-app path (`/athletes/…`, `/help/…#anchor`, `:id` = the athlete in view) becomes app
 * navigation, anything else (other sites, `javascript:`, `data:`) is plain text.
 *
 * Headings written `## Title {#anchor}` (the help-page format, main/help/parse.ts) get the id
 * `help-<anchor>` so a link can scroll to them.
 */
import type { ComponentPropsWithoutRef, ReactNode } from 'react';
import Markdown_ from 'react-markdown';
import type { Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { hashForAppPath } from '../router';

/** The smallest mdast shape the anchor plugin walks. */
interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
  data?: { hProperties?: Record<string, unknown> };
}

const ANCHOR_RE = /\s*\{#([a-z0-9]+(?:-[a-z0-9]+)*)\}\s*$/;

/** remark plugin: `## Title {#anchor}` → heading text "Title" with id `help-anchor`. */
function remarkHeadingAnchors() {
  return (tree: MdNode) => {
    const walk = (n: MdNode): void => {
      if (n.type === 'heading') {
        const last = n.children?.at(-1);
        const m = last?.type === 'text' && typeof last.value === 'string' ? ANCHOR_RE.exec(last.value) : null;
        if (last && m) {
          last.value = last.value!.slice(0, m.index);
          n.data = { ...n.data, hProperties: { ...n.data?.hProperties, id: `help-${m[1]}` } };
        }
        return;
      }
      n.children?.forEach(walk);
    };
    walk(tree);
  };
}

/** True for an in-app path (`/…`, not `//host`): the only links that navigate. */
export function isAppPath(href: string | undefined): href is string {
  return typeof href === 'string' && href.startsWith('/') && !href.startsWith('//') && !href.startsWith('/\\');
}

type HeadingProps = ComponentPropsWithoutRef<'h2'> & { node?: unknown };

function components(athleteId: string | null | undefined, skipTitle: boolean): Components {
  const heading = (Tag: 'h2' | 'h3') =>
    function Heading({ node: _n, children, id }: HeadingProps) {
      return (
        <Tag id={id} tabIndex={-1}>
          {children}
        </Tag>
      );
    };
  return {
    h1: skipTitle ? () => null : heading('h2'),
    h2: heading('h2'),
    h3: heading('h3'),
    h4: heading('h3'),
    h5: heading('h3'),
    h6: heading('h3'),
    a: ({ href, children }) => (isAppPath(href) ? <a href={hashForAppPath(href, athleteId)}>{children}</a> : <span>{children}</span>),
    table: ({ children }) => <table className="table">{children}</table>,
    th: ({ children, style }) => (
      <th scope="col" style={style}>
        {children}
      </th>
    ),
  };
}

/** Keep only the URLs the link component may use (in-app paths); everything else is dropped before rendering. */
function urlTransform(url: string): string {
  return isAppPath(url) ? url : '';
}

/**
 * Render Markdown. `athleteId` fills `:id` in in-app links; `skipTitle` drops the `# Title`
 * (the page shows it itself). A front-matter block (`---` … `---`) at the top is not shown.
 */
export function Markdown({ body, athleteId, skipTitle = false }: { body: string; athleteId?: string | null; skipTitle?: boolean }): ReactNode {
  const source = body.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, '');
  return (
    <div className="markdown">
      <Markdown_
        remarkPlugins={[remarkGfm, remarkHeadingAnchors]}
        components={components(athleteId, skipTitle)}
        disallowedElements={['img']}
        unwrapDisallowed
        urlTransform={urlTransform}
      >
        {source}
      </Markdown_>
    </div>
  );
}

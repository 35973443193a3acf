/** Help: placeholder until the help centre (versioned help pages) is part of the contract. */
import { Page } from '../components/Page';

export function Help() {
  return (
    <Page page="help" state="ready" title="Help">
      <section className="card">
        <h2>Getting around</h2>
        <ul>
          <li><kbd>Tab</kbd> moves between controls; in the athlete list, <kbd>↑</kbd>/<kbd>↓</kbd>, <kbd>Page Up</kbd>/<kbd>Page Down</kbd>, <kbd>Home</kbd>/<kbd>End</kbd> move the selection and <kbd>Enter</kbd> opens the athlete.</li>
          <li>Every measurement shows the conditions it was taken under next to the number. Readings the pipeline could not measure are listed as omitted, with the reason.</li>
          <li>Pages your role cannot use are not shown.</li>
        </ul>
        <p className="muted">The full help centre (versioned pages with "Show me" links) is not built yet.</p>
      </section>
    </Page>
  );
}

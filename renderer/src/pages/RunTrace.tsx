/** Run trace of an assistant run (linked from "via Assistant" activity rows). */
import { Page } from '../components/Page';

export function RunTrace({ runId }: { runId: string }) {
  return (
    <Page page="trace" state="ready" title="Assistant run">
      <section className="card">
        <p>Run <code>{runId}</code></p>
        <p className="muted">The run trace (request, model steps, tool calls with masked arguments, policy decisions, approver and writes) is shown here once the assistant is connected to this build.</p>
      </section>
    </Page>
  );
}

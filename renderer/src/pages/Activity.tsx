/** The activity log: who changed what; "via Assistant" rows link to the run trace; Undo per change. */
import { useEffect, useState } from 'react';
import { call } from '../bridge';
import { ReviewDialog } from '../components/ChangeReview';
import { FormMessages, useEntryForm } from '../components/Form';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatDateTime, humanize } from '../format';
import { href } from '../router';

export function Activity() {
  const data = useLoad(() => call('activity.list', { limit: 200 }), 'activity');
  const [done, setDone] = useState<string | null>(null);
  // Undo goes through the one form path: the service plans the inverse, the review dialog says
  // what will be reverted, and nothing is written until the user confirms.
  const form = useEntryForm('undo', { onSaved: (s) => setDone(s) });
  // "Already undone" (in another tab, on another device) is the outcome wanted: show the list as it is now.
  const already = form.error?.code === 'Conflict' && /already (been )?(undone|applied)/i.test(form.error.message);
  const reload = data.reload;
  useEffect(() => {
    if (already) reload();
  }, [already, reload]);
  function undo(changesetId: string) {
    setDone(null);
    void form.submit('changesets.undo', { changeset_id: changesetId });
  }
  return (
    <Page page="activity" state={data.state} title="Activity">
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      <form data-form="undo" data-state={form.state} onSubmit={(e) => e.preventDefault()}>
        <FormMessages form={form} />
        {form.review ? <ReviewDialog form={form} /> : null}
      </form>
      {done ? (
        <p role="status" className="ok-note" data-saved="true">
          Done: {done}
        </p>
      ) : null}
      {data.state === 'ready' ? (
        data.data.activity.length === 0 ? (
          <p className="muted">No changes recorded yet.</p>
        ) : (
          <table className="table activity">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Record</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.data.activity.map((a) => (
                <tr key={a.id} data-activity={a.id} data-via-assistant={a.via_assistant ? 'true' : 'false'}>
                  <td>{formatDateTime(a.created_at)}</td>
                  <td>{a.via_assistant && a.run_id ? <a href={href({ page: 'trace', runId: a.run_id })}>{a.actor_name}</a> : a.actor_name}</td>
                  <th scope="row">{a.summary}</th>
                  <td className="small">{humanize(a.record_table)}</td>
                  <td>
                    {a.changeset_id ? (
                      <button type="button" className="link" data-action="undo" onClick={() => undo(a.changeset_id!)}>
                        Undo…
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </Page>
  );
}

/**
 * Settings → Devices (device.manage): registered capture cameras, wearables and tablets with the
 * last four characters of their API key and when it was issued; Register device and Replace key
 * (the new key is shown once, in this dialog, and only its hash is stored; the old key stops
 * working), and Revoke (the key stops working; the device keeps none until Replace key issues
 * one). All three submit `devices.register` / `devices.rotateKey` / `devices.revoke` through
 * `forms.submit`, like every other form.
 */
import { useState } from 'react';
import type { VerbOutput } from '../../../../models/verbs';
import { call } from '../../bridge';
import type { EntryForm, ShownRows } from '../../components/Form';
import { Field, FormDialog, SavedNote, shownRows, useEntryForm } from '../../components/Form';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { formatDateTime, humanize } from '../../format';
import { RecordTable } from './RecordTable';

type DeviceRow = VerbOutput<'devices.list'>['devices'][number];
type Open = { kind: 'register' } | { kind: 'rotate'; device: DeviceRow } | { kind: 'revoke'; device: DeviceRow } | null;

/** The Devices card of Settings. */
export function DevicesSection() {
  const data = useLoad(() => call('devices.list', {}), 'settings-devices');
  const [open, setOpen] = useState<Open>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const done = (s: string) => {
    setOpen(null);
    setSaved(s);
  };
  return (
    <section className="card" aria-labelledby="devices-settings" data-section="devices">
      <div className="card-head">
        <h2 id="devices-settings">Devices</h2>
        <button
          type="button"
          className="primary"
          data-action="register-device"
          onClick={() => {
            setSaved(null);
            setOpen({ kind: 'register' });
          }}
        >
          Register device
        </button>
      </div>
      <p className="small muted">Capture cameras, wearables and tablets that send data with an API key. A key is shown once, when it is issued.</p>
      <SavedNote text={saved} />
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {open?.kind === 'register' ? <RegisterDialog onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'rotate' ? <RotateDialog device={open.device} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'revoke' ? <RevokeDialog device={open.device} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {data.state === 'ready' ? (
        data.data.devices.length === 0 ? (
          <p className="muted">No devices registered.</p>
        ) : (
          <RecordTable
            caption="Devices"
            rows={data.data.devices}
            rowKey={(d) => d.id}
            rowAttr="device"
            rowId={(d) => d.name}
            name={{ label: 'Device', cell: (d) => d.name }}
            columns={[
              { label: 'Kind', cell: (d) => humanize(d.kind) },
              {
                label: 'API key',
                attr: 'device-key',
                cell: (d) => (d.api_key_last4 ? <code>…{d.api_key_last4}</code> : <span className="badge muted">revoked</span>),
              },
              { label: 'Key issued', cell: (d) => formatDateTime(d.key_rotated_at) },
            ]}
            actions={(d) => [
              { id: 'rotate-key', label: d.api_key_last4 ? 'Replace key…' : 'Issue key…', onClick: () => setOpen({ kind: 'rotate', device: d }) },
              ...(d.api_key_last4 ? [{ id: 'revoke-device', label: 'Revoke…', onClick: () => setOpen({ kind: 'revoke', device: d }) }] : []),
            ]}
          />
        )
      ) : null}
    </section>
  );
}

/** The new key, shown once, with a Done button that closes the dialog. */
function KeyOnce({ apiKey, summary, onDone }: { apiKey: string; summary: string; onDone(): void }) {
  return (
    <div className="field wide" data-key-once>
      <p role="status">
        <strong>{summary}.</strong> Copy this key into the device now: it is shown only this once.
      </p>
      <output className="key-once" data-api-key>
        {apiKey}
      </output>
      <div className="form-actions">
        <button type="button" className="primary" data-action="key-done" onClick={onDone} autoFocus>
          I have copied it — close
        </button>
      </div>
    </div>
  );
}

/** Submit and keep the one-time key (applied changes that reveal a key are never queued for review). */
function useRevealingSubmit(form: EntryForm) {
  const [revealed, setRevealed] = useState<{ key: string; summary: string } | null>(null);
  async function submit(verb: string, input: Record<string, unknown>, expected?: ShownRows) {
    const r = await form.submit(verb, input, expected);
    if (r?.status === 'applied' && r.reveal?.api_key) setRevealed({ key: r.reveal.api_key, summary: r.changeset.summary });
  }
  return { revealed, submit };
}

function RegisterDialog({ onClose, onSaved }: { onClose(): void; onSaved(s: string): void }) {
  const [v, setV] = useState({ name: '', kind: 'camera' });
  const form = useEntryForm('device-register');
  const { revealed, submit } = useRevealingSubmit(form);
  return (
    <FormDialog
      form={form}
      title="Register device"
      submitLabel="Register device"
      onSubmit={() => void submit('devices.register', { name: v.name.trim(), kind: v.kind })}
      onClose={revealed ? () => onSaved(revealed.summary) : onClose}
      hideActions={Boolean(revealed)}
    >
      {revealed ? (
        <KeyOnce apiKey={revealed.key} summary={revealed.summary} onDone={() => onSaved(revealed.summary)} />
      ) : (
        <>
          <Field label="Device name" name="name" form={form} hint="e.g. Clinic camera 2">
            <input type="text" value={v.name} onChange={(e) => setV((x) => ({ ...x, name: e.target.value }))} maxLength={100} autoComplete="off" required />
          </Field>
          <Field label="Kind" name="kind" form={form}>
            <select value={v.kind} onChange={(e) => setV((x) => ({ ...x, kind: e.target.value }))}>
              <option value="camera">Camera</option>
              <option value="wearable">Wearable</option>
              <option value="tablet">Tablet</option>
            </select>
          </Field>
        </>
      )}
    </FormDialog>
  );
}

function RotateDialog({ device, onClose, onSaved }: { device: DeviceRow; onClose(): void; onSaved(s: string): void }) {
  const form = useEntryForm('device-rotate');
  const { revealed, submit } = useRevealingSubmit(form);
  return (
    <FormDialog
      form={form}
      title={`${device.api_key_last4 ? 'Replace' : 'Issue'} the key of ${device.name}?`}
      submitLabel={device.api_key_last4 ? 'Replace key' : 'Issue key'}
      danger={Boolean(device.api_key_last4)}
      onSubmit={() => void submit('devices.rotateKey', { id: device.id }, shownRows(device))}
      onClose={revealed ? () => onSaved(revealed.summary) : onClose}
      hideActions={Boolean(revealed)}
      intro={
        revealed ? null : device.api_key_last4 ? (
          <p>
            The key ending <code>{device.api_key_last4}</code> stops working at once; {device.name} sends nothing until the new key is entered on it.
          </p>
        ) : (
          <p>{device.name} has no key (revoked). A new key is issued and shown once.</p>
        )
      }
    >
      {revealed ? <KeyOnce apiKey={revealed.key} summary={revealed.summary} onDone={() => onSaved(revealed.summary)} /> : null}
    </FormDialog>
  );
}

function RevokeDialog({ device, onClose, onSaved }: { device: DeviceRow; onClose(): void; onSaved(s: string): void }) {
  const form = useEntryForm('device-revoke', { onSaved });
  return (
    <FormDialog
      form={form}
      title={`Revoke the key of ${device.name}?`}
      submitLabel="Revoke key"
      danger
      onSubmit={() => void form.submit('devices.revoke', { id: device.id }, shownRows(device))}
      onClose={onClose}
      intro={
        <p>
          The key ending <code>{device.api_key_last4}</code> stops working at once. The device stays listed, with what it recorded; issue a new key here when it
          is back in use.
        </p>
      }
    />
  );
}

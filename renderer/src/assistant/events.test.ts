import { describe, expect, it } from 'vitest';
import type { RunEventEnvelope } from '../../../models/contract';
import { EMPTY_RUN, reduceRun } from './events';

let seq = 0;
function env(event: Record<string, unknown>, ephemeral = false): RunEventEnvelope {
  seq += ephemeral ? 0 : 1;
  return {
    id: String(ephemeral ? 0 : seq),
    runId: 'run-1',
    seq: ephemeral ? 0 : seq,
    event: event as unknown as RunEventEnvelope['event'],
    ...(ephemeral ? { ephemeral } : {}),
  };
}

describe('assistant run reducer', () => {
  it('streams text, tool calls, a confirm request and its resolution', () => {
    seq = 0;
    const events = [
      env({ type: 'RUN_STARTED', threadId: 't', runId: 'run-1' }),
      env({ type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' }),
      env({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Logging ' }),
      env({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'the session.' }),
      env({ type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'log_session_load' }),
      env({ type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"squad_id":"s"' }),
      env({ type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: ',"rpe":6}' }),
      env({
        type: 'CUSTOM',
        name: 'kinetix.tool_call',
        value: { toolCallId: 'c1', tool: 'log_session_load', title: 'Log session loads', risk: 'bulk', status: 'proposed' },
      }),
      env({
        type: 'CUSTOM',
        name: 'kinetix.confirm_required',
        value: {
          toolCallId: 'c1',
          tool: 'log_session_load',
          title: 'Log session loads',
          summary: 'Log 3 loads',
          argsHash: 'h',
          expiresAt: '2026-11-29T10:10:00Z',
          changeset: {
            changes: [
              { op: 'insert', table: 'session_load', id: 'a', after: { rpe: 6 } },
              { op: 'insert', table: 'session_load', id: 'b', after: { rpe: 6 } },
            ],
          },
        },
      }),
    ];
    let s = events.reduce(reduceRun, EMPTY_RUN);
    expect(s.messages[0]?.text).toBe('Logging the session.');
    // Creation order across messages and tool calls: the panel shows them as they happened.
    expect(s.messages[0]!.order).toBeLessThan(s.toolCalls[0]!.order);
    expect(s.toolCalls[0]).toMatchObject({ name: 'log_session_load', args: '{"squad_id":"s","rpe":6}', status: 'proposed' });
    expect(s.status).toBe('waiting_confirm');
    expect(s.confirm?.rows).toHaveLength(2);
    s = reduceRun(
      s,
      env({ type: 'CUSTOM', name: 'kinetix.tool_call', value: { toolCallId: 'c1', tool: 'log_session_load', title: 'Log session loads', status: 'executed' } }),
    );
    expect(s.confirm).toBeNull();
    expect(s.status).toBe('running');
    s = reduceRun(s, env({ type: 'RUN_FINISHED', threadId: 't', runId: 'run-1' }));
    expect(s.status).toBe('finished');
    expect(s.lastEventId).toBe(String(seq));
  });

  it('ignores replayed events at or before the last event id (reload replays)', () => {
    seq = 0;
    const a = env({ type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' });
    const b = env({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'hi' });
    let s = [a, b].reduce(reduceRun, EMPTY_RUN);
    s = [a, b].reduce(reduceRun, s);
    expect(s.messages[0]?.text).toBe('hi');
  });

  it('keeps a one-time reveal without moving the last event id', () => {
    seq = 0;
    let s = reduceRun(EMPTY_RUN, env({ type: 'RUN_STARTED' }));
    s = reduceRun(s, env({ type: 'CUSTOM', name: 'kinetix.reveal', value: { toolCallId: 'c', values: { api_key: 'aik_x' } } }, true));
    expect(s.reveal).toEqual({ api_key: 'aik_x' });
    expect(s.lastEventId).toBe('1');
  });

  it('shows policy decisions, a needs-owner wait and the content hash to approve', () => {
    seq = 0;
    let s = reduceRun(EMPTY_RUN, env({ type: 'RUN_STARTED' }));
    s = reduceRun(
      s,
      env({
        type: 'CUSTOM',
        name: 'kinetix.policy',
        value: {
          toolCallId: 'c1',
          tool: 'bulk_update_rates',
          changesetId: 'cs',
          verdict: 'needs_owner',
          decisions: [{ code: 'numeric_change', effect: 'needs_owner', reason: 'A 25% change needs an owner.' }],
        },
      }),
    );
    s = reduceRun(
      s,
      env({
        type: 'CUSTOM',
        name: 'kinetix.needs_owner',
        value: { toolCallId: 'c1', tool: 'bulk_update_rates', title: 'Bulk update rates', changesetId: 'cs' },
      }),
    );
    expect(s.toolCalls[0]).toMatchObject({
      needsOwner: true,
      title: 'Bulk update rates',
      policy: [{ effect: 'needs_owner', reason: 'A 25% change needs an owner.' }],
    });
    s = reduceRun(
      s,
      env({
        type: 'CUSTOM',
        name: 'kinetix.confirm_required',
        value: {
          toolCallId: 'c2',
          tool: 't',
          title: 'T',
          summary: 'S',
          argsHash: 'a',
          contentHash: 'h',
          expiresAt: '2026-01-01T00:00:00Z',
          changeset: { changes: [] },
          policy: { verdict: 'allow', decisions: [] },
        },
      }),
    );
    expect(s.confirm).toMatchObject({ contentHash: 'h', policy: [] });
    s = reduceRun(s, env({ type: 'CUSTOM', name: 'kinetix.tools_narrowed', value: { reason: 'untrusted_content', dropped: ['bulk_update_rates'] } }));
    expect(s.narrowed).toMatch(/switched off/);
  });

  it('says when a run was stopped', () => {
    seq = 0;
    let s = reduceRun(EMPTY_RUN, env({ type: 'RUN_STARTED' }));
    s = reduceRun(s, env({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' }, result: { reason: 'Stopped by the user.' } }));
    expect(s).toMatchObject({ status: 'finished', stopped: 'Stopped by the user.' });
  });
});

/**
 * The tool registry and availability (kinetix.md §2): `available(role)` is a pure function of the
 * role map; `availableEnabled` then removes tools an administrator switched off (it can only
 * remove, never add). Destructive tools are registered but never offered. The result is
 * snapshotted onto each run at start.
 */
import type { Role } from '../../models/roles';
import { hasPermission } from '../../models/roles';
import type { Db } from '../data/db';
import { getOrgSetting } from '../data/identity';
import type { Tool } from './tool';

/** Org setting (JSON array of tool names) listing tools an administrator switched off. */
export const DISABLED_TOOLS_SETTING_KEY = 'kinetix.disabled_tools';

/** A log sink: one line, never a secret. */
export type LogFn = (line: string, fields?: Record<string, unknown>) => void;

/** Every registered tool by name. */
export class ToolRegistry {
  private readonly byName = new Map<string, Tool>();

  constructor(tools: readonly Tool[] = []) {
    for (const t of tools) this.register(t);
  }

  /** Add a tool. @throws Error on a duplicate name. */
  register(tool: Tool): this {
    if (this.byName.has(tool.name)) throw new Error(`Tool "${tool.name}" is registered twice.`);
    this.byName.set(tool.name, tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  /** Every registered tool, including destructive ones (for audits and tests). */
  all(): Tool[] {
    return [...this.byName.values()];
  }

  /** Tools `role` may be offered: its permission is in the role map, and it is not destructive. Pure. */
  available(role: Role | string): Tool[] {
    return this.all().filter((t) => t.risk !== 'destructive' && hasPermission(role, t.permission));
  }

  /**
   * {@link available} minus the tools disabled in the org's settings. If the disabled list cannot
   * be read, the role-only set is returned and one line is logged (the switch is a convenience,
   * not a boundary: it can never add a tool the role lacks).
   */
  availableEnabled(db: Db, orgId: string, role: Role | string, log: LogFn): Tool[] {
    const base = this.available(role);
    let disabled: unknown;
    try {
      disabled = getOrgSetting<unknown>(db, orgId, DISABLED_TOOLS_SETTING_KEY);
    } catch (e) {
      log('kinetix: could not read the disabled-tools setting; using the role-only tool set', { orgId, error: e instanceof Error ? e.name : 'unknown' });
      return base;
    }
    if (disabled === undefined || disabled === null) return base;
    if (!Array.isArray(disabled)) {
      log('kinetix: the disabled-tools setting is not a list; using the role-only tool set', { orgId });
      return base;
    }
    const off = new Set(disabled.filter((x): x is string => typeof x === 'string'));
    return base.filter((t) => !off.has(t.name));
  }
}

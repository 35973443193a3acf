/**
 * Test support. INTERIM: until migration 0005 is registered (after 0004 lands), tests create
 * the mcp_token table themselves through the data layer.
 */
import type { Db } from '../data/db';
import { ensureMcpSchemaInterim } from '../data/mcp';

/** Make sure the mcp_token table exists in a test database. */
export function installMcpSchemaForTests(db: Db): void {
  ensureMcpSchemaInterim(db);
}

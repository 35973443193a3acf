/**
 * The ordered list of migrations. Append only: a database whose applied migrations are not a
 * prefix of this list is refused at open (it was written by a different build).
 * Numbers are reserved per area: 0002 kinetix (assistant runs), 0003 help centre, 0004+ next.
 */
import { sql as core } from './0001_core';
import { sql as kinetix } from './0002_kinetix';
import { sql as help } from './0003_help';
import { sql as proposals } from './0004_proposals';
import { sql as mcp } from './0005_mcp';
import { sql as pageProposals } from './0006_page_proposals';

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { id: 1, name: '0001_core', sql: core },
  { id: 2, name: '0002_kinetix', sql: kinetix },
  { id: 3, name: '0003_help', sql: help },
  { id: 4, name: '0004_proposals', sql: proposals },
  { id: 5, name: '0005_mcp', sql: mcp },
  { id: 6, name: '0006_page_proposals', sql: pageProposals },
];

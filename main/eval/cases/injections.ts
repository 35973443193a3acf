import type { EvalCase } from '../types';
export const INJECTIONS: EvalCase[] = [];

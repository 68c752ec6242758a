/**
 * The one rule for an environment's own tools that is checked before a call reaches them: every
 * required argument must be given. The refusal says which are missing and what the tool expects.
 */
import type { ToolSchema } from '../contracts.ts';

/** Why a call cannot run (a required argument missing), or null. */
export function ownToolRefusal(schema: ToolSchema, args: Record<string, unknown>): string | null {
  const missing = (schema.parameters.required ?? []).filter((k) => args?.[k] === undefined);
  if (missing.length === 0) return null;
  const expects = Object.keys(schema.parameters.properties)
    .map((k) => `"${k}"`)
    .join(', ');
  return `${schema.name}: missing argument ${missing.map((k) => `"${k}"`).join(', ')}; ${schema.name} expects {${expects}}`;
}

/**
 * The whitelist: every tool an episode can be given, with the schema the model sees. Descriptions are
 * short on purpose (they go into the 'full' system prompt); the compact prompt shows only `name(params)`.
 */
import type { ToolSchema } from '../contracts.ts';

export const TOOL_NAMES = ['calc', 'js', 'sh', 'git'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const TOOL_SCHEMAS: Record<ToolName, ToolSchema> = {
  calc: {
    name: 'calc',
    description: 'Evaluate an arithmetic expression: numbers, + - * / % ** and parentheses.',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'e.g. (12.5 + 3) * 4' } },
      required: ['expression'],
    },
  },
  js: {
    name: 'js',
    description:
      'Run JavaScript in a fresh sandbox (no network, no files). Returns console output and the value of the last expression.',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: 'JavaScript source; the last expression is the result' } },
      required: ['code'],
    },
  },
  sh: {
    name: 'sh',
    description:
      'Run a shell command on the virtual file system: ls cat echo printf mkdir rm mv cp touch wc grep head tail find sort uniq pwd cd, with | > >> && and globs.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', description: 'e.g. mkdir -p src && echo hi > src/a.txt' } },
      required: ['command'],
    },
  },
  git: {
    name: 'git',
    description:
      'Run a git command in the repository at /: init status add rm commit -m log branch checkout switch merge diff reset tag.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', description: 'e.g. commit -m "Add readme"' } },
      required: ['command'],
    },
  },
};

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

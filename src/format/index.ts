/** The Hermes/ChatML format: rendering conversations and system prompts, parsing assistant turns. */
export * from './chatml.ts';
export * from './system-prompt.ts';
export * from './parse.ts';
export { parseLooseJson } from './loose-json.ts';

/** The sandbox: the QuickJS runner and the whitelisted tools an episode can use. */
export {
  runJs,
  loadQuickJS,
  MAX_STACK_BYTES,
  DEFAULT_RUN_OPTIONS,
  type RunJsOptions,
  type RunJsResult,
  type HostFunction,
} from './quickjs.ts';
export { runJsIsolated, watchdogMs, type IsolatedRunOptions } from './js-thread.ts';
export { evaluateArithmetic, formatNumber, CalcError } from './calc.ts';
export { VirtualFs, FsError, resolvePath } from './vfs.ts';
export { runShell, type ShellState, type ShOutput } from './sh.ts';
export { GitTool, GIT_USAGE } from './git.ts';
export { TOOL_NAMES, TOOL_SCHEMAS, isToolName, type ToolName } from './tool-schemas.ts';
export {
  createToolbox,
  DEFAULT_TOOL_TIMEOUT_MS,
  DEFAULT_MAX_RESULT_CHARS,
  truncate,
  type Toolbox,
  type ToolboxOptions,
  type ToolResult,
  type GitSnapshot,
} from './toolbox.ts';

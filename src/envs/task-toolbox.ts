/**
 * The sandbox a task runs in: a toolbox with the environment's tools, seeded with the task's files,
 * git repository and hidden setup calls. Environments that check the final state (shell_exec, git_repo)
 * rebuild it by replaying the trajectory's tool calls on a fresh toolbox, so `evaluate(task, trajectory)`
 * needs nothing but stored data and can re-score an old trajectory at any time.
 */
import type { Trajectory } from '../contracts.ts';
import { createToolbox, type Toolbox, type ToolboxOptions } from '../sandbox/index.ts';
import type { ToolboxSetup } from './types.ts';

export type ToolboxExtras = Omit<ToolboxOptions, 'tools' | 'files' | 'gitRepo'>;

/** A toolbox in the task's starting state. Throws when a setup call fails: that is an environment bug. */
export async function openTaskToolbox(setup: ToolboxSetup, tools: readonly string[], extras: ToolboxExtras = {}): Promise<Toolbox> {
  const toolbox = await createToolbox({ ...extras, tools: [...tools], files: setup.files, gitRepo: setup.gitRepo });
  for (const call of setup.calls ?? []) {
    const result = await toolbox.call(call.tool, call.args);
    if (result.error !== null) {
      toolbox.dispose();
      throw new Error(`task setup call ${call.tool}(${JSON.stringify(call.args)}) failed: ${result.error}`);
    }
  }
  return toolbox;
}

/**
 * The task's toolbox after re-running every tool call the trajectory made, in order (failed ones too:
 * they may have changed state before failing). Unparseable calls (no tool name) are skipped.
 */
export async function replayTrajectory(setup: ToolboxSetup, tools: readonly string[], trajectory: Trajectory, extras: ToolboxExtras = {}): Promise<Toolbox> {
  const toolbox = await openTaskToolbox(setup, tools, extras);
  for (const step of trajectory.steps) {
    const call = step.tool_call;
    if (call && call.tool_name !== '' && tools.includes(call.tool_name)) await toolbox.call(call.tool_name, call.parameters);
  }
  return toolbox;
}

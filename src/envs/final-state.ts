/**
 * The files and repository a trajectory leaves behind, rebuilt by replaying its calls on a fresh copy of
 * the task's starting state (task-toolbox.ts), for environments that score the final state (git_repo,
 * repo_fix).
 *
 * Final states are kept by (starting state, tools, replayed calls), newest last: the same calls on the same
 * task end in the same state whatever the final answer, so re-scoring a trajectory, or scoring answers that
 * differ only in their last turn (the task-blind policies' readings), replays the calls once.
 */
import type { Trajectory } from '../contracts.ts';
import type { GitSnapshot } from '../sandbox/index.ts';
import { replayTrajectory } from './task-toolbox.ts';
import type { ToolboxSetup } from './types.ts';

export interface FinalState {
  repo: GitSnapshot | null;
  files: Record<string, string>;
}

const finalStates = new Map<string, Promise<FinalState>>();
const MAX_FINAL_STATES = 512;

export function finalState(setup: ToolboxSetup, tools: readonly string[], trajectory: Trajectory): Promise<FinalState> {
  // The calls replayTrajectory replays: every parsed call to one of the tools, failed ones too.
  const calls = trajectory.steps.flatMap((s) =>
    s.tool_call && s.tool_call.tool_name !== '' && tools.includes(s.tool_call.tool_name)
      ? [[s.tool_call.tool_name, s.tool_call.parameters]]
      : [],
  );
  const key = JSON.stringify([setup, tools, calls]);
  let state = finalStates.get(key);
  if (state === undefined) {
    state = (async () => {
      const toolbox = await replayTrajectory(setup, tools, trajectory);
      try {
        return { repo: await toolbox.snapshotGit(), files: toolbox.snapshotFiles() };
      } finally {
        toolbox.dispose();
      }
    })();
    finalStates.set(key, state);
    // A failed replay is not remembered: the next call tries again (and throws again, loudly).
    state.catch(() => finalStates.delete(key));
    if (finalStates.size > MAX_FINAL_STATES) finalStates.delete(finalStates.keys().next().value!);
  }
  return state;
}

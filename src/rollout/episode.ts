/**
 * The agent loop: render the system prompt (with the
 * environment's tools) and the task, then repeat — policy.generate → parse `<think>`/`<tool_call>` →
 * run each call in the sandbox with a per-call timeout → record one step per call → append the tool
 * responses — until a turn has no tool call (the final answer) or `maxSteps` turns have run.
 *
 * Calls are read in the model family's format (Hermes `<tool_call>` blocks, Llama's JSON: the codec
 * format/conversation.ts picks from the policy's chat template and tokenizer).
 *
 * Nothing the model does throws: a tool error, a timeout and an unreadable call each become a step
 * whose observation spells the error out, so the model can learn from it. A policy failure (a remote
 * endpoint down) and a chat template that raises on the conversation (Llama's refuses two calls in one
 * turn) end the episode with finish_reason 'error' and a step saying why. Only setup bugs (an environment
 * whose sandbox cannot be built, a template that cannot render tool calls offered tools) and an aborted
 * signal throw.
 */
import type {
  ChatMessage,
  FinishReason,
  SamplingParams,
  Task,
  ToolCall,
  ToolSchema,
  Trajectory,
  TrajectoryStep,
} from '../contracts.ts';
import { DEFAULT_CONFIG } from '../config/schema.ts';
import type { Environment } from '../envs/types.ts';
import { deriveSeed } from '../rng.ts';
import { lazyTaskToolbox, type LazyTaskToolbox, type ToolboxExtras } from '../envs/task-toolbox.ts';
import {
  isCallError,
  observationText,
  renderSystemPrompt,
  toolResponseMessage,
  type SystemPromptStyle,
} from '../format/index.ts';
import { closeAfterSampled, conversationFormat, type ConversationFormat } from '../format/conversation.ts';
import type { ParsedAssistant } from '../format/parse.ts';
import type { ToolCaller } from '../envs/task-toolbox.ts';
import type { EpisodeListener } from './events.ts';
import type { Policy, PolicyTurn } from './policy.ts';
import { TokenTrace } from './token-trace.ts';

export interface EpisodeOptions {
  policy: Policy;
  env: Environment;
  task: Task;
  /** Sampling seed: with the same weights and task it replays the episode. Turn t samples with deriveSeed(seed, t). */
  seed: number;
  /** Most assistant turns (a run's `trajectory_collection.max_steps_per_trajectory`). */
  maxSteps?: number;
  sampling?: SamplingParams;
  /** Per tool call deadline. */
  toolTimeoutMs?: number;
  /** More toolbox options (result size cap…); tools, files and repo come from the environment. */
  toolbox?: ToolboxExtras;
  /** Tools offered instead of the environment's `requiredTools`. */
  tools?: string[];
  /** System prompt style instead of the environment's (remote models read the 'full' Hermes schemas best). */
  systemStyle?: SystemPromptStyle;
  groupId?: string;
  runId?: string | null;
  signal?: AbortSignal;
  onEvent?: EpisodeListener;
}

export async function runEpisode(options: EpisodeOptions): Promise<Trajectory> {
  const { env, task } = options;
  const maxSteps = options.maxSteps ?? DEFAULT_CONFIG.trajectory_collection.max_steps_per_trajectory;
  const toolTimeoutMs = options.toolTimeoutMs ?? DEFAULT_CONFIG.trajectory_collection.tool_timeout_ms;
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new RangeError(`maxSteps must be a positive integer, got ${maxSteps}`);

  const startedAt = performance.now();
  const createdAt = Date.now();
  const own =
    env.openTools && env.ownTools.length > 0
      ? { schemas: env.ownTools, open: () => env.openTools!(task, { timeoutMs: toolTimeoutMs }) }
      : undefined;
  const toolbox = lazyTaskToolbox(
    env.toolbox(task),
    options.tools ?? env.requiredTools,
    { ...options.toolbox, timeoutMs: toolTimeoutMs },
    own,
  );
  const key = newId();
  try {
    const episode = startEpisode(options, toolbox, maxSteps, key);
    if (episode.prompt !== null) {
      for (let turn = 0; turn < maxSteps; turn++) {
        if ((await runTurn(episode, turn)) === 'stop') break;
      }
    }
    const trajectory = assembleTrajectory(episode, startedAt, createdAt);
    episode.emit({ type: 'done', finish_reason: episode.finishReason, trajectory });
    return trajectory;
  } finally {
    options.policy.releaseEpisode?.(key);
    toolbox.dispose();
  }
}

/** One episode as its turns build it: the conversation, its tokens, the steps so far and how it ended. */
interface Episode {
  options: EpisodeOptions;
  /** Names the episode to the policy (PolicyContext.episode), which may keep state between its turns. */
  key: string;
  policy: Policy;
  format: ConversationFormat;
  tools: ToolSchema[];
  toolbox: LazyTaskToolbox;
  sampling: SamplingParams;
  maxSteps: number;
  emit: EpisodeListener;
  messages: ChatMessage[];
  trace: TokenTrace;
  steps: TrajectoryStep[];
  /** The first prompt, null when the template could not render it (the episode then has no turn). */
  prompt: string | null;
  finalResponse: string | null;
  finishReason: FinishReason;
  sampledTokens: number;
}

/** The system prompt (with the tools, unless the template lists them itself) and the task, rendered as the first prompt. */
function startEpisode(options: EpisodeOptions, toolbox: LazyTaskToolbox, maxSteps: number, key: string): Episode {
  const { policy, env, task } = options;
  // The policy's own chat template when its tokenizer has one (a Hugging Face model), else ChatML.
  const format = conversationFormat(policy.tokenizer);
  const tools = toolbox.schemas;
  if (tools.length > 0 && format.toolRefusal) {
    throw new Error(format.toolRefusal(`environment "${env.name}" offers ${tools.map((t) => t.name).join(', ')}`));
  }
  const system = renderSystemPrompt(format.rendersTools ? [] : tools, {
    style: options.systemStyle ?? env.systemStyle,
    instructions: env.instructions,
  });
  const episode: Episode = {
    options,
    key,
    policy,
    format,
    tools,
    toolbox,
    sampling: options.sampling ?? DEFAULT_CONFIG.sampling,
    maxSteps,
    emit: options.onEvent ?? (() => {}),
    messages: [system, { role: 'user', content: task.prompt }],
    trace: new TokenTrace(policy.tokenizer),
    steps: [],
    prompt: null,
    finalResponse: null,
    finishReason: 'max_steps',
    sampledTokens: 0,
  };
  try {
    episode.prompt = format.prompt(episode.messages, tools);
  } catch (error) {
    templateFailed(episode, 0, null, error);
  }
  if (episode.prompt !== null) episode.trace.appendPrompt(episode.prompt);
  return episode;
}

/**
 * One turn: the policy's text, then either the final answer (no call) or each call's observation and the prompt
 * for the next turn. 'stop' when the episode ends here (an answer, a policy or template error).
 */
async function runTurn(episode: Episode, turn: number): Promise<'next' | 'stop'> {
  const { format, messages, tools, trace } = episode;
  const out = await generateTurn(episode, turn);
  if (out === null) return 'stop';
  const close = closeAfterSampled(episode.policy.tokenizer, format, out.tokens);
  messages.push({ role: 'assistant', content: out.text });

  const parsed = format.calls.parse(out.text);
  try {
    format.check(messages, tools);
  } catch (error) {
    templateFailed(episode, turn, parsed.thought, error);
    trace.appendPrompt(close);
    return 'stop';
  }
  if (parsed.calls.length === 0) {
    episode.finalResponse = parsed.answer;
    episode.finishReason = out.finish_reason === 'length' ? 'max_tokens' : 'answer';
    trace.appendPrompt(close);
    return 'stop';
  }

  const toolMessage = toolResponseMessage(await runCalls(episode, turn, parsed));
  const before = messages.slice();
  messages.push(toolMessage);
  const last = turn === episode.maxSteps - 1;
  // After the last allowed turn no assistant header follows: the conversation ends on the tool turn.
  let next: string;
  try {
    next = format.continuation(before, [toolMessage], tools, { addGenerationPrompt: !last });
  } catch (error) {
    templateFailed(episode, turn, null, error);
    trace.appendPrompt(close);
    return 'stop';
  }
  trace.appendPrompt(close + next);
  return 'next';
}

/** The policy's turn, its sampled tokens appended to the trace; null (and an error step) when the policy failed. */
async function generateTurn(episode: Episode, turn: number): Promise<PolicyTurn | null> {
  const { options, policy, emit, trace } = episode;
  options.signal?.throwIfAborted();
  emit({ type: 'turn_start', turn });
  let out: PolicyTurn;
  try {
    out = await policy.generate(
      { messages: episode.messages.slice(), tools: episode.tools, tokens: trace.tokens.slice(), episode: episode.key },
      {
        seed: deriveSeed(options.seed, 'turn', turn),
        sampling: episode.sampling,
        signal: options.signal,
        onText: (piece) => emit({ type: 'text', turn, piece }),
      },
    );
  } catch (error) {
    options.signal?.throwIfAborted();
    episode.steps.push(makeStep(episode.steps.length, turn, null, null, `policy error: ${errorText(error)}`));
    episode.finishReason = 'error';
    return null;
  }
  emit({ type: 'turn_end', turn, text: out.text, finish_reason: out.finish_reason });
  if (policy.tokenizer && out.tokens.length === 0 && out.text !== '') {
    throw new Error(
      `policy "${policy.id}" has a tokenizer but returned text without tokens; return the sampled ids or set tokenizer to null`,
    );
  }
  episode.sampledTokens += out.tokens.length;
  trace.appendSampled(out.tokens, out.logprobs);
  return out;
}

/** Each call of the turn in the sandbox, one step per call (an unreadable call is a step too); their observations. */
async function runCalls(episode: Episode, turn: number, parsed: ParsedAssistant): Promise<string[]> {
  const { emit, steps } = episode;
  const observations: string[] = [];
  for (const [index, call] of parsed.calls.entries()) {
    const thought = index === 0 ? parsed.thought : null;
    let toolCall: ToolCall;
    if (isCallError(call)) {
      toolCall = { tool_name: '', parameters: {}, result: '', error: `parse error: ${call.error}`, latency_ms: 0 };
    } else {
      emit({ type: 'tool_call', turn, step_id: steps.length, name: call.name, arguments: call.arguments });
      // The sandbox is built on the first call, outside the call's deadline.
      toolCall = await callTool(await episode.toolbox.open(), call.name, call.arguments);
    }
    const observation = observationText(toolCall);
    const step = makeStep(steps.length, turn, thought, toolCall, observation);
    steps.push(step);
    observations.push(observation);
    emit({ type: 'tool_result', turn, step });
  }
  return observations;
}

/** A template that raises (on a system message, on two calls in a turn) ends the episode with its message as a step. */
function templateFailed(episode: Episode, turn: number, thought: string | null, error: unknown): void {
  episode.steps.push(makeStep(episode.steps.length, turn, thought, null, `chat template error: ${errorText(error)}`));
  episode.finishReason = 'error';
}

function assembleTrajectory(episode: Episode, startedAt: number, createdAt: number): Trajectory {
  const { options, policy, trace } = episode;
  const { task } = options;
  return {
    id: newId(),
    task_id: task.id,
    task_description: task.prompt,
    model_id: policy.id,
    steps: episode.steps,
    final_response: episode.finalResponse,
    success: null,
    judge_score: null,
    token_count: policy.tokenizer ? trace.length : episode.sampledTokens,
    wall_time_seconds: (performance.now() - startedAt) / 1000,
    env: task.env,
    split: task.split,
    difficulty: task.difficulty,
    seed: options.seed,
    group_id: options.groupId ?? newId(),
    run_id: options.runId ?? null,
    messages: episode.messages,
    tools: episode.tools.slice(),
    tokens: trace.tokens,
    assistant_mask: trace.assistantMask,
    logprobs: trace.logprobs,
    turn_spans: trace.turnSpans,
    finish_reason: episode.finishReason,
    votes: [],
    sampling: { ...episode.sampling },
    created_at: createdAt,
  };
}

/**
 * One tool call as a step. The toolbox enforces the deadline itself (toolbox.ts: the guest's running
 * time, and a hang backstop); a wall-clock limit here would also count the time this thread spent on
 * other episodes, and fail trivial calls on a busy machine.
 */
async function callTool(toolbox: ToolCaller, name: string, args: Record<string, unknown>): Promise<ToolCall> {
  const t0 = performance.now();
  try {
    const r = await toolbox.call(name, args);
    return { tool_name: name, parameters: args, result: r.result, error: r.error, latency_ms: elapsedMs(t0) };
  } catch (error) {
    // Toolbox.call promises never to throw; if it does anyway the model still gets a step, not a crash.
    return {
      tool_name: name,
      parameters: args,
      result: '',
      error: `tool "${name}" failed: ${errorText(error)}`,
      latency_ms: elapsedMs(t0),
    };
  }
}

function makeStep(
  stepId: number,
  turn: number,
  thought: string | null,
  toolCall: ToolCall | null,
  observation: string,
): TrajectoryStep {
  return { step_id: stepId, turn, thought, tool_call: toolCall, observation, timestamp: Date.now() / 1000 };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function newId(): string {
  return globalThis.crypto.randomUUID();
}

/** Milliseconds since t0, to 0.01 ms (fast tools would all round to 0). */
function elapsedMs(t0: number): number {
  return Math.round((performance.now() - t0) * 100) / 100;
}

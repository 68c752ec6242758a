/**
 * The five rubric dimensions: what the remote rubric judge is asked for (render.ts), the keys its
 * reply is read by (parse-score.ts), and so words a judged trajectory must not be able to write as a
 * verdict of its own (neutralise.ts).
 */
export const RUBRIC_DIMENSIONS = [
  {
    key: 'task_completion',
    label: 'Task completion',
    question: 'does the final response fully answer what the user asked?',
  },
  { key: 'reasoning_quality', label: 'Reasoning quality', question: 'is the thinking sound and efficient?' },
  { key: 'tool_use', label: 'Tool use', question: 'were the tools and their arguments well chosen?' },
  {
    key: 'error_handling',
    label: 'Error handling',
    question: 'when something failed, did the agent handle it correctly?',
  },
  { key: 'efficiency', label: 'Efficiency', question: 'did it avoid unnecessary steps?' },
] as const;

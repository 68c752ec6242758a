/**
 * The one temperature rule for log-probabilities: a token sampled at temperature t > 0 is scored as
 * log softmax(logits / t), and one picked greedily (t = 0) at temperature 1. Sampling records that
 * log-prob and training recomputes it by this rule, so the GRPO ratio compares like with like.
 */
export function scoringTemperature(temperature: number | undefined): number {
  return temperature !== undefined && temperature > 0 ? temperature : 1;
}

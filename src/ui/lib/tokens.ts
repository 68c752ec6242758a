/** A piece of decoded text and the signed value it is tinted by (see components/TokenPieces.svelte). */
export interface TokenPiece {
  text: string;
  /** null on prompt and tool-response tokens (not trained). */
  value: number | null;
}

/**
 * Per-token values for a trajectory from its mask: the sample's advantage on policy tokens, null
 * elsewhere. `decode` turns one token id into its text (the tokenizer's piece).
 */
export function piecesFromMask(tokens: readonly number[], mask: readonly number[], advantage: number | readonly number[], decode: (id: number) => string): TokenPiece[] {
  return tokens.map((id, i) => ({
    text: decode(id),
    value: mask[i] ? (typeof advantage === 'number' ? advantage : (advantage[i] ?? null)) : null,
  }));
}

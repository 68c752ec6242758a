/** A piece of decoded text and the signed value it is tinted by (see components/TokenPieces.svelte). */
export interface TokenPiece {
  text: string;
  /** null on prompt and tool-response tokens (not trained). */
  value: number | null;
}

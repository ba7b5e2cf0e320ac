/**
 * The one ref scheme of a normalized tree (a snapshot's or the glass a11y service's): node `i` in
 * pre-order (0-based) is `e{i+1}`. Pure.
 */

const NODE_REF_RE = /^e([1-9][0-9]{0,8})$/;

/** The ref of the node at pre-order `index` (0-based): 0 → `e1`. */
export function formatNodeRef(index: number): string {
  return `e${index + 1}`;
}

/** The pre-order index a ref names (`e1` → 0); undefined for anything else (`e0`, `e01`, `1`). */
export function parseNodeRef(ref: string): number | undefined {
  const m = NODE_REF_RE.exec(ref);
  return m ? Number(m[1]) - 1 : undefined;
}

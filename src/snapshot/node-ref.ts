/**
 * The one ref scheme of a normalized tree (a snapshot's or the glass a11y service's): node `i` in
 * pre-order (0-based) is `e{i+1}`. Pure.
 */

const NODE_REF_RE = /^e([1-9][0-9]{0,8})$/;

/**
 * The ref of the node at pre-order `index` (0-based): 0 → `e1`. Up to `e999999` the string is made
 * from its character codes: a template would first make the number's string (a second allocation,
 * garbage at once; a tree makes one ref per node).
 */
export function formatNodeRef(index: number): string {
  const n = index + 1;
  if (n >= 1 && n <= 999_999 && Number.isInteger(n)) {
    const d0 = 48 + (n % 10);
    if (n < 10) return String.fromCharCode(101, d0);
    const d1 = 48 + (((n / 10) | 0) % 10);
    if (n < 100) return String.fromCharCode(101, d1, d0);
    const d2 = 48 + (((n / 100) | 0) % 10);
    if (n < 1000) return String.fromCharCode(101, d2, d1, d0);
    const d3 = 48 + (((n / 1000) | 0) % 10);
    if (n < 10_000) return String.fromCharCode(101, d3, d2, d1, d0);
    const d4 = 48 + (((n / 10_000) | 0) % 10);
    if (n < 100_000) return String.fromCharCode(101, d4, d3, d2, d1, d0);
    return String.fromCharCode(101, 48 + ((n / 100_000) | 0), d4, d3, d2, d1, d0);
  }
  return `e${n}`;
}

/** The pre-order index a ref names (`e1` → 0); undefined for anything else (`e0`, `e01`, `1`). */
export function parseNodeRef(ref: string): number | undefined {
  const m = NODE_REF_RE.exec(ref);
  return m ? Number(m[1]) - 1 : undefined;
}

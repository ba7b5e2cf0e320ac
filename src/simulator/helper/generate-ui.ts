/**
 * Deterministic large uiautomator trees for benchmarks and stress tests: a feed app (toolbar, a long
 * scrollable list of cards, some with nested horizontal carousels and Compose-style wrapper chains)
 * plus a status bar window. Exactly `nodeCount` `<node>` elements with uiautomator's full attribute
 * set (incl. visible-to-user and drawing-order): about 385 bytes per node, so 5,000 nodes come to
 * about 1.9 MB (older dumps without those two attributes would be ~1.6 MB). Text mixes ASCII with accented, CJK, Cyrillic, Arabic and emoji
 * words, so UTF-8 chunk boundaries fall inside multi-byte characters.
 */

import { mulberry32 } from '../prng.ts';
import { type Bounds, type UiNode, writeUiXml } from './ui-xml-writer.ts';

const PKG = 'com.example.feed';
const W = 1080;
const H = 2400;

const WORDS = [
  'update',
  'photo',
  'shared',
  'weekend',
  'trip',
  'coffee',
  'café',
  'naïve',
  'München',
  '東京',
  'こんにちは',
  'Москва',
  'привет',
  'مرحبا',
  'שלום',
  '🎉',
  '👍🏽',
  'launch',
  'review',
  'design',
  'release',
  'meeting',
  'garden',
  'recipe',
  'concert',
  'tickets',
  'Zoë',
  'São Paulo',
  '서울',
  'ok',
  'new',
  'draft',
  '&',
  '<tag>',
  '"quoted"',
];

class Builder {
  left: number;
  readonly #rand: () => number;

  constructor(budget: number, rand: () => number) {
    this.left = budget;
    this.#rand = rand;
  }

  int(max: number): number {
    return Math.floor(this.#rand() * max);
  }

  words(count: number): string {
    const out: string[] = [];
    for (let i = 0; i < count; i += 1) out.push(WORDS[this.int(WORDS.length)] as string);
    return out.join(' ');
  }

  /** Create a node if the budget allows, then its children (preorder), stopping when the budget is spent. */
  node(
    className: string,
    bounds: Bounds,
    extra: Partial<UiNode>,
    children?: (add: (child: UiNode | undefined) => boolean) => void,
  ): UiNode | undefined {
    if (this.left <= 0) return undefined;
    this.left -= 1;
    const node: UiNode = {
      packageName: extra.packageName ?? PKG,
      className: className.includes('.') ? className : `android.widget.${className}`,
      bounds,
      visible: bounds[1] < H && bounds[3] > 0 && bounds[3] > bounds[1],
      ...extra,
    };
    if (children) {
      const kids: UiNode[] = [];
      children((child) => {
        if (child === undefined) return false;
        child.drawingOrder ??= kids.length + 1;
        kids.push(child);
        return this.left > 0;
      });
      if (kids.length > 0) node.children = kids;
    }
    return node;
  }
}

function card(b: Builder, i: number, top: number): UiNode | undefined {
  const bottom = top + 320;
  const carousel = i % 7 === 3;
  const deep = i % 11 === 5;
  return b.node(
    'FrameLayout',
    [24, top, W - 24, bottom],
    { resourceId: `${PKG}:id/card`, clickable: true, focusable: true, longClickable: i % 2 === 0 },
    (add) => {
      add(
        b.node('LinearLayout', [24, top, W - 24, bottom], {}, (add2) => {
          if (
            !add2(
              b.node('ImageView', [48, top + 24, 168, top + 144], { contentDesc: `Avatar of ${b.words(1)}` }),
            )
          )
            return;
          if (
            !add2(
              b.node('LinearLayout', [192, top + 24, W - 144, bottom - 24], {}, (add3) => {
                if (
                  !add3(
                    b.node('TextView', [192, top + 24, W - 144, top + 84], {
                      text: b.words(2 + b.int(3)),
                      resourceId: `${PKG}:id/title`,
                    }),
                  )
                )
                  return;
                if (
                  !add3(
                    b.node('TextView', [192, top + 90, W - 144, top + 200], { text: b.words(4 + b.int(8)) }),
                  )
                )
                  return;
                add3(
                  b.node('LinearLayout', [192, top + 210, W - 144, top + 270], {}, (add4) => {
                    for (let t = 0; t < 3; t += 1) {
                      const l = 192 + t * 180;
                      if (
                        !add4(
                          b.node('TextView', [l, top + 210, l + 160, top + 270], {
                            text: `#${b.words(1)}`,
                            clickable: true,
                          }),
                        )
                      )
                        return;
                    }
                  }),
                );
              }),
            )
          )
            return;
          add2(
            b.node('ImageButton', [W - 144, top + 24, W - 48, top + 120], {
              contentDesc: 'More actions',
              clickable: true,
              focusable: true,
            }),
          );
        }),
      );
      if (carousel) {
        add(
          b.node(
            'androidx.recyclerview.widget.RecyclerView',
            [24, bottom - 60, W - 24, bottom],
            { scrollable: true, focusable: true, resourceId: `${PKG}:id/carousel` },
            (add2) => {
              for (let c = 0; c < 6; c += 1) {
                const l = 24 + c * 260;
                if (
                  !add2(
                    b.node('ImageView', [l, bottom - 60, l + 240, bottom], {
                      contentDesc: `Photo ${c + 1}`,
                      clickable: true,
                    }),
                  )
                )
                  return;
              }
            },
          ),
        );
      }
      if (deep) {
        // Compose-style nesting: a chain of wrapper Views around one clickable leaf.
        const chain = (level: number): UiNode | undefined =>
          level === 0
            ? b.node('Button', [W - 300, top + 260, W - 48, top + 316], {
                text: 'Reply',
                clickable: true,
                focusable: true,
              })
            : b.node('android.view.View', [W - 300, top + 260, W - 48, top + 316], {}, (addc) => {
                addc(chain(level - 1));
              });
        add(chain(8 + b.int(10)));
      }
    },
  );
}

function appWindow(b: Builder): UiNode | undefined {
  return b.node('FrameLayout', [0, 0, W, H], {}, (add) => {
    add(
      b.node('LinearLayout', [0, 0, W, H], {}, (add1) => {
        add1(
          b.node('FrameLayout', [0, 118, W, H], { resourceId: 'android:id/content' }, (add2) => {
            add2(
              b.node(
                'androidx.appcompat.widget.Toolbar',
                [0, 118, W, 265],
                { resourceId: `${PKG}:id/toolbar` },
                (add3) => {
                  if (!add3(b.node('TextView', [48, 150, 600, 230], { text: 'Feed' }))) return;
                  add3(
                    b.node('ImageButton', [954, 128, W, 254], {
                      contentDesc: 'Search',
                      clickable: true,
                      focusable: true,
                    }),
                  );
                },
              ),
            );
            add2(
              b.node(
                'androidx.recyclerview.widget.RecyclerView',
                [0, 265, W, H],
                { resourceId: `${PKG}:id/feed`, scrollable: true, focusable: true },
                (add3) => {
                  for (let i = 0; ; i += 1) if (!add3(card(b, i, 265 + i * 340))) return;
                },
              ),
            );
          }),
        );
      }),
    );
  });
}

function statusBar(b: Builder): UiNode | undefined {
  const s = { packageName: 'com.android.systemui' };
  return b.node('FrameLayout', [0, 0, W, 118], s, (add) => {
    add(
      b.node(
        'LinearLayout',
        [0, 0, W, 118],
        { ...s, resourceId: 'com.android.systemui:id/status_bar' },
        (add1) => {
          if (
            !add1(
              b.node('TextView', [42, 30, 150, 88], {
                ...s,
                text: '12:30',
                resourceId: 'com.android.systemui:id/clock',
              }),
            )
          )
            return;
          for (const desc of [
            'Wi‑Fi three bars.',
            'Phone four bars.',
            'Battery 64 percent.',
            'Do not disturb.',
          ]) {
            if (!add1(b.node('ImageView', [800, 36, 846, 82], { ...s, contentDesc: desc }))) return;
          }
        },
      ),
    );
  });
}

/** A generated uiautomator XML tree with exactly `nodeCount` nodes (deterministic for a seed). */
export function generateUiXml(nodeCount: number, seed = 1): string {
  if (!Number.isInteger(nodeCount) || nodeCount < 0) throw new RangeError('nodeCount must be an integer ≥ 0');
  const rand = mulberry32(seed);
  const statusNodes = nodeCount >= 60 ? 7 : 0;
  const appBuilder = new Builder(nodeCount - statusNodes, rand);
  const roots: UiNode[] = [];
  const appRoot = appWindow(appBuilder);
  if (appRoot) roots.push({ ...appRoot, drawingOrder: 0 });
  const bar = statusBar(new Builder(statusNodes, rand));
  if (bar) roots.push({ ...bar, drawingOrder: 0 });
  return writeUiXml(roots);
}

/**
 * The simulator's built-in screen: a notes app on a 1080x2400 phone showing a "New folder" dialog
 * with the keyboard up. Four window roots in uiautomator order (app, dialog, status bar, keyboard),
 * each with the snapshot helper's window metadata. It exercises what the host must handle:
 * scrollables (a list and a chip row), a partly visible list item, a FAB overlapping a card with a
 * higher drawing-order, a sync banner fully covered by a later sibling, a focused EditText with a
 * hint, a checked checkbox, a disabled button, non-ASCII text (emoji, CJK, accents) and XML
 * characters that need escaping.
 */
import { type Bounds, type UiNode, writeUiXml } from './ui-xml-writer.ts';

export const BUILTIN_SCREEN_SIZE = { width: 1080, height: 2400 } as const;

const APP = 'com.example.notes';
const SYSUI = 'com.android.systemui';
const IME = 'com.google.android.inputmethod.latin';

type Extra = Omit<UiNode, 'className' | 'packageName' | 'bounds' | 'children'>;

function n(
  packageName: string,
  className: string,
  bounds: Bounds,
  extra: Extra = {},
  children: UiNode[] = [],
): UiNode {
  return {
    packageName,
    className: className.includes('.') ? className : `android.widget.${className}`,
    bounds,
    ...extra,
    ...(children.length > 0 ? { children } : {}),
  };
}

const app = (className: string, bounds: Bounds, extra: Extra = {}, children: UiNode[] = []): UiNode =>
  n(APP, className, bounds, extra, children);

const NOTES: Array<{ title: string; snippet: string; date: string; pinned: boolean }> = [
  { title: 'Groceries', snippet: 'Milk, eggs, café beans & 2× bread', date: 'Today', pinned: true },
  {
    title: 'Trip to Kyoto 🗾',
    snippet: '京都駅 → 嵐山, rent bikes at 9:00',
    date: 'Yesterday',
    pinned: true,
  },
  { title: 'Meeting notes', snippet: 'Q3 roadmap: ship <search> before "beta"', date: 'Mon', pinned: false },
  { title: 'Gift ideas 🎁', snippet: 'Headphones, a book about Zürich', date: 'Sun', pinned: false },
  { title: 'Recipes', snippet: 'Crème brûlée — 4 yolks, 100 g sugar', date: 'Jun 12', pinned: false },
  { title: 'Books to read', snippet: 'Dune, 三体, The Overstory', date: 'Jun 3', pinned: false },
  { title: 'Workout', snippet: '5×5 squats, 3×10 pull-ups', date: 'May 28', pinned: false },
];

function noteCard(note: (typeof NOTES)[number], i: number, top: number): UiNode {
  const bottom = top + 280;
  const visibleBottom = Math.min(bottom, 2274);
  const b = (l: number, t: number, r: number, bo: number): Bounds => [l, t, r, Math.min(bo, visibleBottom)];
  return app(
    'androidx.cardview.widget.CardView',
    b(42, top, 1038, bottom),
    {
      resourceId: `${APP}:id/note_card`,
      clickable: true,
      focusable: true,
      longClickable: true,
      drawingOrder: i + 1,
    },
    [
      app('LinearLayout', b(42, top, 1038, bottom), { drawingOrder: 1 }, [
        app('TextView', b(84, top + 36, 900, top + 102), {
          text: note.title,
          resourceId: `${APP}:id/note_title`,
          drawingOrder: 1,
        }),
        app('TextView', b(84, top + 114, 996, top + 174), {
          text: note.snippet,
          resourceId: `${APP}:id/note_snippet`,
          drawingOrder: 2,
        }),
        app('TextView', b(84, top + 192, 400, top + 240), {
          text: note.date,
          resourceId: `${APP}:id/note_date`,
          drawingOrder: 3,
        }),
      ]),
      app('CheckBox', b(912, top + 30, 1008, top + 126), {
        resourceId: `${APP}:id/pin`,
        contentDesc: 'Pinned',
        checkable: true,
        checked: note.pinned,
        clickable: true,
        focusable: true,
        drawingOrder: 2,
      }),
    ],
  );
}

function appWindow(): UiNode {
  // RecyclerView only holds the cards that are at least partly on screen (the last one is clipped).
  const cards = NOTES.map((note, i) => ({ note, i, top: 474 + i * 310 }))
    .filter(({ top }) => top < 2274)
    .map(({ note, i, top }) => noteCard(note, i, top));
  const chips = ['All', 'Work', 'Personal', 'Travel 🧳', '日本語', 'Archive'];
  let left = 42;
  const chipNodes = chips.map((label, i) => {
    const width = 60 + label.length * 26;
    const node = app(
      'com.google.android.material.chip.Chip',
      [left, 318, Math.min(left + width, 1080), 444],
      {
        text: label,
        checkable: true,
        checked: i === 0,
        clickable: true,
        focusable: true,
        selected: i === 0,
        drawingOrder: i + 1,
        visible: left < 1080,
      },
    );
    left += width + 24;
    return node;
  });
  return app(
    'FrameLayout',
    [0, 0, 1080, 2400],
    {
      drawingOrder: 0,
      window: { index: 0, type: 1, layer: 0, active: false, focused: false, bounds: [0, 0, 1080, 2400] },
    },
    [
      app('LinearLayout', [0, 0, 1080, 2400], { drawingOrder: 1 }, [
        app('FrameLayout', [0, 118, 1080, 2274], { resourceId: 'android:id/content', drawingOrder: 1 }, [
          app(
            'androidx.coordinatorlayout.widget.CoordinatorLayout',
            [0, 118, 1080, 2274],
            { resourceId: `${APP}:id/coordinator`, drawingOrder: 1 },
            [
              app(
                'com.google.android.material.appbar.AppBarLayout',
                [0, 118, 1080, 462],
                { resourceId: `${APP}:id/app_bar`, drawingOrder: 4 },
                [
                  app(
                    'androidx.appcompat.widget.Toolbar',
                    [0, 118, 1080, 265],
                    {
                      resourceId: `${APP}:id/toolbar`,
                      drawingOrder: 1,
                    },
                    [
                      app('ImageButton', [0, 128, 126, 254], {
                        contentDesc: 'Open navigation drawer',
                        clickable: true,
                        focusable: true,
                        drawingOrder: 1,
                      }),
                      app('TextView', [168, 155, 331, 228], { text: 'Notes', drawingOrder: 2 }),
                      app(
                        'androidx.appcompat.widget.ActionMenuView',
                        [828, 128, 1080, 254],
                        { drawingOrder: 3 },
                        [
                          app('TextView', [828, 128, 954, 254], {
                            resourceId: `${APP}:id/action_search`,
                            contentDesc: 'Search',
                            clickable: true,
                            focusable: true,
                            longClickable: true,
                            drawingOrder: 1,
                          }),
                          app('ImageView', [954, 128, 1080, 254], {
                            contentDesc: 'More options',
                            clickable: true,
                            focusable: true,
                            longClickable: true,
                            drawingOrder: 2,
                          }),
                        ],
                      ),
                    ],
                  ),
                  app(
                    'HorizontalScrollView',
                    [0, 300, 1080, 462],
                    {
                      resourceId: `${APP}:id/filter_chips`,
                      scrollable: true,
                      focusable: true,
                      drawingOrder: 2,
                    },
                    [
                      app(
                        'com.google.android.material.chip.ChipGroup',
                        [0, 300, 1250, 462],
                        { drawingOrder: 1 },
                        chipNodes,
                      ),
                    ],
                  ),
                ],
              ),
              // Sync banner behind the list: the RecyclerView (higher drawing-order) covers it completely.
              app(
                'LinearLayout',
                [0, 462, 1080, 582],
                { resourceId: `${APP}:id/sync_banner`, drawingOrder: 1 },
                [app('TextView', [42, 492, 700, 552], { text: 'Syncing… 3 notes left', drawingOrder: 1 })],
              ),
              app(
                'androidx.recyclerview.widget.RecyclerView',
                [0, 462, 1080, 2274],
                {
                  resourceId: `${APP}:id/notes_list`,
                  scrollable: true,
                  focusable: true,
                  drawingOrder: 2,
                },
                cards,
              ),
              // The FAB floats over the last visible cards.
              app('ImageButton', [891, 2085, 1038, 2232], {
                resourceId: `${APP}:id/fab_new_note`,
                contentDesc: 'New note',
                clickable: true,
                focusable: true,
                drawingOrder: 3,
              }),
            ],
          ),
        ]),
        app('View', [0, 2274, 1080, 2400], {
          resourceId: 'android:id/navigationBarBackground',
          drawingOrder: 2,
        }),
      ]),
    ],
  );
}

function dialogWindow(): UiNode {
  const b: Bounds = [68, 760, 1012, 1356];
  return app(
    'FrameLayout',
    b,
    {
      drawingOrder: 0,
      window: { index: 1, type: 1, layer: 1, active: true, focused: true, bounds: b },
    },
    [
      app('FrameLayout', b, { resourceId: 'android:id/content', drawingOrder: 1 }, [
        app('LinearLayout', b, { resourceId: `${APP}:id/parentPanel`, drawingOrder: 1 }, [
          app('TextView', [131, 823, 949, 898], {
            text: 'New folder',
            resourceId: `${APP}:id/alertTitle`,
            drawingOrder: 1,
          }),
          app('EditText', [131, 940, 949, 1066], {
            text: 'Trips & "ideas"',
            resourceId: `${APP}:id/folder_name`,
            hint: 'Folder name',
            clickable: true,
            focusable: true,
            focused: true,
            longClickable: true,
            drawingOrder: 2,
          }),
          app('TextView', [131, 1078, 949, 1132], {
            text: 'Names can’t contain / or \\',
            resourceId: `${APP}:id/folder_hint`,
            drawingOrder: 3,
          }),
          app(
            'LinearLayout',
            [68, 1168, 1012, 1324],
            { resourceId: `${APP}:id/buttonPanel`, drawingOrder: 4 },
            [
              app('Button', [560, 1189, 763, 1315], {
                text: 'CANCEL',
                resourceId: 'android:id/button2',
                clickable: true,
                focusable: true,
                drawingOrder: 1,
              }),
              app('Button', [784, 1189, 970, 1315], {
                text: 'CREATE',
                resourceId: 'android:id/button1',
                clickable: true,
                focusable: true,
                drawingOrder: 2,
              }),
              app('Button', [110, 1189, 340, 1315], {
                text: 'SHARE',
                resourceId: 'android:id/button3',
                enabled: false,
                drawingOrder: 3,
              }),
            ],
          ),
        ]),
      ]),
    ],
  );
}

function statusBarWindow(): UiNode {
  const s = (className: string, bounds: Bounds, extra: Extra = {}, children: UiNode[] = []): UiNode =>
    n(SYSUI, className, bounds, extra, children);
  return s(
    'FrameLayout',
    [0, 0, 1080, 118],
    {
      drawingOrder: 0,
      window: { index: 2, type: 3, layer: 2, active: false, focused: false, bounds: [0, 0, 1080, 118] },
    },
    [
      s('FrameLayout', [0, 0, 1080, 118], { resourceId: `${SYSUI}:id/status_bar`, drawingOrder: 1 }, [
        s(
          'LinearLayout',
          [0, 0, 1080, 118],
          { resourceId: `${SYSUI}:id/status_bar_contents`, drawingOrder: 1 },
          [
            s('TextView', [42, 30, 150, 88], {
              text: '9:41',
              resourceId: `${SYSUI}:id/clock`,
              contentDesc: '9:41 AM',
              drawingOrder: 1,
            }),
            s('ImageView', [170, 36, 216, 82], {
              contentDesc: 'Messages notification: 2 new messages',
              drawingOrder: 2,
            }),
            s(
              'LinearLayout',
              [800, 30, 1038, 88],
              { resourceId: `${SYSUI}:id/system_icons`, drawingOrder: 3 },
              [
                s('ImageView', [800, 36, 846, 82], {
                  resourceId: `${SYSUI}:id/wifi_signal`,
                  contentDesc: 'Wi‑Fi three bars.',
                  drawingOrder: 1,
                }),
                s('ImageView', [858, 36, 904, 82], {
                  resourceId: `${SYSUI}:id/mobile_signal`,
                  contentDesc: 'Phone four bars.',
                  drawingOrder: 2,
                }),
                s('LinearLayout', [916, 30, 1038, 88], {
                  resourceId: `${SYSUI}:id/battery`,
                  contentDesc: 'Battery 87 percent.',
                  drawingOrder: 3,
                }),
              ],
            ),
          ],
        ),
      ]),
    ],
  );
}

function keyboardWindow(): UiNode {
  const k = (className: string, bounds: Bounds, extra: Extra = {}, children: UiNode[] = []): UiNode =>
    n(IME, className, bounds, extra, children);
  const top = 1566;
  const rows = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];
  const rowNodes = rows.map((keys, r) => {
    const y = top + 150 + r * 156;
    const inset = r === 1 ? 54 : r === 2 ? 162 : 6;
    const keyWidth = 107;
    return k('LinearLayout', [6, y, 1074, y + 156], { drawingOrder: r + 1 }, [
      ...[...keys].map((ch, i) =>
        k('FrameLayout', [inset + i * keyWidth, y, inset + (i + 1) * keyWidth, y + 156], {
          resourceId: `${IME}:id/key_pos_${r}_${i}`,
          contentDesc: ch,
          drawingOrder: i + 1,
        }),
      ),
      ...(r === 2
        ? [
            k('FrameLayout', [6, y, 156, y + 156], {
              resourceId: `${IME}:id/key_pos_shift`,
              contentDesc: 'Shift',
              drawingOrder: 8,
            }),
            k('FrameLayout', [924, y, 1074, y + 156], {
              resourceId: `${IME}:id/key_pos_del`,
              contentDesc: 'Delete',
              drawingOrder: 9,
            }),
          ]
        : []),
    ]);
  });
  const bottomY = top + 150 + 3 * 156;
  return k(
    'FrameLayout',
    [0, top, 1080, 2400],
    {
      drawingOrder: 0,
      window: { index: 3, type: 2, layer: 3, active: false, focused: false, bounds: [0, top, 1080, 2400] },
    },
    [
      k('FrameLayout', [0, top, 1080, 2400], { resourceId: 'android:id/inputArea', drawingOrder: 1 }, [
        k(
          'LinearLayout',
          [0, top, 1080, top + 150],
          { resourceId: `${IME}:id/softkey_holder_fixed_candidates`, drawingOrder: 1 },
          [
            k('TextView', [132, top, 393, top + 132], { text: 'Trips', drawingOrder: 1 }),
            k('TextView', [393, top, 686, top + 132], { text: 'Tripping', drawingOrder: 2 }),
            k('TextView', [686, top, 948, top + 132], { text: 'Tríps', drawingOrder: 3 }),
            k('FrameLayout', [948, top, 1074, top + 132], {
              contentDesc: 'Voice input',
              clickable: true,
              drawingOrder: 4,
            }),
          ],
        ),
        k(
          'FrameLayout',
          [0, top + 150, 1080, 2400],
          { resourceId: `${IME}:id/keyboard_holder`, drawingOrder: 2 },
          [
            ...rowNodes,
            k('LinearLayout', [6, bottomY, 1074, bottomY + 156], { drawingOrder: 4 }, [
              k('FrameLayout', [6, bottomY, 166, bottomY + 156], {
                resourceId: `${IME}:id/key_pos_symbols`,
                contentDesc: 'Symbols',
                drawingOrder: 1,
              }),
              k('FrameLayout', [166, bottomY, 272, bottomY + 156], { contentDesc: ',', drawingOrder: 2 }),
              k('FrameLayout', [272, bottomY, 806, bottomY + 156], {
                resourceId: `${IME}:id/key_pos_space`,
                contentDesc: 'Space',
                drawingOrder: 3,
              }),
              k('FrameLayout', [806, bottomY, 913, bottomY + 156], { contentDesc: '.', drawingOrder: 4 }),
              k('FrameLayout', [913, bottomY, 1074, bottomY + 156], {
                resourceId: `${IME}:id/key_pos_ime_action`,
                contentDesc: 'Done',
                drawingOrder: 5,
              }),
            ]),
          ],
        ),
      ]),
    ],
  );
}

let cached: string | undefined;

/** The built-in realistic screen as uiautomator XML (same string on every call). */
export function builtinScreenXml(): string {
  cached ??= writeUiXml([appWindow(), dialogWindow(), statusBarWindow(), keyboardWindow()]);
  return cached;
}

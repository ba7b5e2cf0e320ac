/**
 * The simulated device's screen model (src/simulator/android/screen.ts): typed text lands in the
 * focused editable node (else the first one; dropped without one), backspace removes one code point,
 * set_text replaces, focus moves; the next uiautomator XML — read back by the bridge's own
 * normalizer and by the a11y tree — shows exactly the code points typed, in well-formed XML; and the
 * document is one cached string between edits.
 */
import fc from 'fast-check';
import { XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { UiScreen } from '../../src/simulator/android/screen.ts';
import { activeA11yWindow } from '../../src/simulator/glass/ui-tree.ts';
import { builtinScreenXml } from '../../src/simulator/helper/builtin-screen.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';

const FOLDER_NAME = 'com.example.notes:id/folder_name';
const folderName = (xml: string) => normalizeSnapshot(xml).nodes.find((n) => n.resourceId === FOLDER_NAME);

/** A small --ui style document: a non-editable label, two editable fields, none focused. */
const FORM =
  "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">" +
  '<node index="0" text="" class="android.widget.FrameLayout" package="com.example.form" focused="false" bounds="[0,0][1080,2400]">' +
  '<node index="0" text="Name" class="android.widget.TextView" package="com.example.form" focused="false" bounds="[0,0][1080,100]" />' +
  '<node index="1" text="first" class="android.widget.AutoCompleteTextView" package="com.example.form" clickable="true" focused="false" bounds="[0,100][1080,200]" />' +
  "<node index='2' class='android.widget.EditText' package='com.example.form' clickable='true' focused='false' bounds='[0,200][1080,300]' />" +
  '</node></hierarchy>';

describe('UiScreen', () => {
  it('types into the focused EditText of the built-in screen; the next XML shows it', () => {
    const screen = new UiScreen(builtinScreenXml);
    const before = screen.xml();
    expect(screen.xml()).toBe(before); // one string until something changes
    expect(folderName(before)?.text).toBe('Trips & "ideas"');
    const typed = ' 🚀 世界 שלום e\u0301 <&>';
    expect(screen.type(typed)).toBe(true);
    const after = screen.xml();
    expect(after).not.toBe(before);
    expect(screen.version).toBe(1);
    expect(folderName(after)?.text).toBe(`Trips & "ideas"${typed}`);
    expect(XMLValidator.validate(after)).toBe(true);
    // Only the one attribute changed: the rest of the document is byte for byte the same.
    expect(after.replace(/ text="Trips &amp; &quot;ideas&quot;[^"]*"/, '')).toBe(
      before.replace(/ text="Trips &amp; &quot;ideas&quot;"/, ''),
    );
    // The a11y tree (the active window is the dialog) shows it too.
    const active = activeA11yWindow(after);
    expect(active?.packageName).toBe('com.example.notes');
    const edit = (function find(n): typeof n | undefined {
      if (n.editable) return n;
      for (const c of n.children) {
        const f = find(c);
        if (f) return f;
      }
      return undefined;
    })(active!.root);
    expect(edit?.text).toBe(`Trips & "ideas"${typed}`);
  });

  it('backspace removes the last code point (a whole surrogate pair), and nothing past empty', () => {
    const screen = new UiScreen(() => FORM);
    const target = screen.inputTarget();
    expect(target).toBe(2); // the first editable node: nothing is focused
    screen.setText(2, 'ab🚀');
    expect(screen.deleteBackward()).toBe(true);
    expect(screen.text(2)).toBe('ab');
    screen.deleteBackward();
    screen.deleteBackward();
    expect(screen.text(2)).toBe('');
    const version = screen.version;
    expect(screen.deleteBackward()).toBe(true);
    expect(screen.version).toBe(version); // nothing to delete: the document is untouched
    expect(screen.text(2)).toBe('');
  });

  it('focus moves the input target; single-quoted --ui attributes are rewritten in place', () => {
    const screen = new UiScreen(() => FORM);
    screen.focus(3);
    expect(screen.inputTarget()).toBe(3);
    screen.type('Grüße');
    const xml = screen.xml();
    expect(XMLValidator.validate(xml)).toBe(true);
    const nodes = normalizeSnapshot(xml).nodes;
    expect(nodes[3]).toMatchObject({ className: 'android.widget.EditText', text: 'Grüße', focused: true });
    expect(nodes[2]).toMatchObject({ text: 'first', focused: false });
    screen.focus(2);
    const again = normalizeSnapshot(screen.xml()).nodes;
    expect(again.filter((n) => n.focused).map((n) => n.index)).toEqual([1]);
    screen.type('!');
    expect(screen.text(2)).toBe('first!');
    expect(screen.text(3)).toBe('Grüße');
  });

  it('a tap focuses the editable node under it (topmost window, deepest node); elsewhere it changes nothing', () => {
    const screen = new UiScreen(() => FORM);
    expect(screen.tap(10, 50)).toBe(1); // the label: not editable, no focus
    expect(screen.version).toBe(0);
    expect(screen.tap(500, 250)).toBe(3);
    expect(screen.inputTarget()).toBe(3);
    expect(screen.tap(5000, 5000)).toBeNull();
    // The built-in screen: the dialog (window layer 1) lies over the app (layer 0); its EditText is focused already.
    const builtin = new UiScreen(builtinScreenXml);
    const edit = builtin.inputTarget()!;
    expect(builtin.nodeAt(540, 1000)).toBe(edit);
    const title = builtin.nodeAt(540, 860)!; // "New folder", a TextView in the dialog
    expect(builtin.isEditable(title)).toBe(false);
    expect(normalizeSnapshot(builtin.xml()).nodes[title]?.text).toBe('New folder');
  });

  it('drops typed text when the screen has no editable node', () => {
    const xml = FORM.replace(/AutoCompleteTextView|EditText/g, 'TextView');
    const screen = new UiScreen(() => xml);
    expect(screen.inputTarget()).toBeNull();
    expect(screen.type('lost')).toBe(false);
    expect(screen.deleteBackward()).toBe(false);
    expect(screen.xml()).toBe(xml);
  });

  it('property: any text typed reads back exactly (less what XML 1.0 cannot carry), in well-formed XML', () => {
    const char = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 1 }),
      fc.string({ unit: 'grapheme', maxLength: 1 }),
      fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    );
    fc.assert(
      fc.property(fc.array(char, { maxLength: 12 }), (chars) => {
        const text = chars.join('');
        const screen = new UiScreen(() => FORM);
        screen.type(text);
        const xml = screen.xml();
        expect(XMLValidator.validate(xml)).toBe(true);
        // What XML 1.0 cannot carry (controls but tab, LF, CR; unpaired surrogates) is dropped.
        const expected = `first${text}`.replace(
          /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
          '',
        );
        expect(normalizeSnapshot(xml).nodes[2]?.text).toBe(expected);
        expect(screen.text(2)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});

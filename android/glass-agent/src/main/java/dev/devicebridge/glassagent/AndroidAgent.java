package dev.devicebridge.glassagent;

import android.content.ClipData;
import android.os.Build;
import android.os.SystemClock;
import android.view.InputDevice;
import android.view.KeyCharacterMap;
import android.view.KeyEvent;
import android.view.MotionEvent;
import dev.devicebridge.glassagent.core.Agent;
import dev.devicebridge.glassagent.core.Chord;
import dev.devicebridge.glassagent.core.KeyComposition;
import dev.devicebridge.glassagent.core.PointerSample;
import java.util.List;

/** {@link Agent} on a device, as the shell uid: hidden services through {@link ClipboardService} and {@link InputService}. */
final class AndroidAgent implements Agent {
    /** KeyEvent.KEYCODE_PASTE (API 24; not in the API-23 android.jar this compiles against). */
    static final int KEYCODE_PASTE = 279;

    private final ClipboardService clipboard = new ClipboardService();
    private final InputService input = new InputService();

    @Override
    public String clipboardGet() throws Exception {
        return clipboard.getText();
    }

    @Override
    public void clipboardSet(String text) throws Exception {
        clipboard.setText(text);
    }

    @Override
    public void pointer(List<PointerSample> gesture, String button) throws Exception {
        long down = SystemClock.uptimeMillis();
        int last = gesture.size() - 1;
        for (int i = 0; i <= last; i++) {
            PointerSample s = gesture.get(i);
            long at = down + s.tMs;
            long wait = at - SystemClock.uptimeMillis();
            if (wait > 0) Thread.sleep(wait);
            int action = i == 0 ? MotionEvent.ACTION_DOWN : MotionEvent.ACTION_MOVE;
            inject(down, at, action, s.x, s.y);
            if (i == last) inject(down, at, MotionEvent.ACTION_UP, s.x, s.y);
        }
    }

    @Override
    public long uptimeMillis() {
        return SystemClock.uptimeMillis();
    }

    /** A streamed touch's event: the same finger, source and injection as a gesture's. */
    @Override
    public void touch(int action, long downTime, long eventTime, double x, double y) throws Exception {
        inject(downTime, eventTime, action, x, y);
    }

    /**
     * One finger (pointer id 0, TOOL_TYPE_FINGER, no buttons) on the touchscreen, as a real touch
     * reports it: pressure 1 while it touches, 0 in the UP.
     */
    private void inject(long down, long at, int action, double x, double y) throws Exception {
        MotionEvent.PointerProperties[] properties = {new MotionEvent.PointerProperties()};
        properties[0].id = 0;
        properties[0].toolType = MotionEvent.TOOL_TYPE_FINGER;
        MotionEvent.PointerCoords[] coords = {new MotionEvent.PointerCoords()};
        coords[0].x = (float) x;
        coords[0].y = (float) y;
        coords[0].pressure = action == MotionEvent.ACTION_UP ? 0f : 1f;
        coords[0].size = 1f;
        MotionEvent e = MotionEvent.obtain(down, at, action, 1, properties, coords, 0, 0, 1f, 1f, 0, 0, InputDevice.SOURCE_TOUCHSCREEN, 0);
        try {
            input.inject(e);
        } finally {
            e.recycle();
        }
    }

    /** A key event from the virtual keyboard device, with source SOURCE_KEYBOARD. */
    private static KeyEvent keyEvent(long now, int action, int code, int meta) {
        return new KeyEvent(now, now, action, code, 0, meta, KeyCharacterMap.VIRTUAL_KEYBOARD, 0, 0, InputDevice.SOURCE_KEYBOARD);
    }

    @Override
    public void key(Chord chord) throws Exception {
        long now = SystemClock.uptimeMillis();
        for (int code : chord.modifierKeyCodes) {
            input.inject(keyEvent(now, KeyEvent.ACTION_DOWN, code, 0));
        }
        int meta = chord.metaState;
        input.inject(keyEvent(now, KeyEvent.ACTION_DOWN, chord.keyCode, meta));
        input.inject(keyEvent(now, KeyEvent.ACTION_UP, chord.keyCode, meta));
        for (int i = chord.modifierKeyCodes.length - 1; i >= 0; i--) {
            input.inject(keyEvent(now, KeyEvent.ACTION_UP, chord.modifierKeyCodes[i], 0));
        }
    }

    /**
     * Characters the virtual keyboard map can type are sent as key events, accented letters as a
     * dead key and the letter ({@link KeyComposition}); every run of other characters (CJK, emoji,
     * …) is pasted: set as the primary clip, then KEYCODE_PASTE (ctrl+V before Android 7, which
     * has no paste key), then the user's previous clip is put back. Injection refuses
     * ACTION_MULTIPLE key events, so they are never used.
     */
    @Override
    public void text(String text) throws Exception {
        KeyCharacterMap map = KeyCharacterMap.load(KeyCharacterMap.VIRTUAL_KEYBOARD);
        StringBuilder toPaste = new StringBuilder();
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            KeyEvent[] events = eventsFor(map, cp);
            if (events == null) {
                toPaste.appendCodePoint(cp);
            } else {
                paste(toPaste);
                for (KeyEvent e : events) {
                    e.setSource(InputDevice.SOURCE_KEYBOARD);
                    input.inject(e);
                }
            }
            i += Character.charCount(cp);
        }
        paste(toPaste);
    }

    private static KeyEvent[] eventsFor(KeyCharacterMap map, int cp) {
        if (Character.charCount(cp) != 1) return null;
        char c = (char) cp;
        KeyEvent[] events = map.getEvents(new char[] {c});
        if (events != null) return events;
        String composed = KeyComposition.decompose(c);
        return composed == null ? null : map.getEvents(composed.toCharArray());
    }

    /**
     * Pastes {@code pending} (then empties it). The paste is injected with WAIT_FOR_FINISH, so the
     * focused app has handled it (and read the clip) before the user's clip is restored. When the
     * user had no clip, or it could not be read, an empty text clip replaces the pasted text, so
     * the typed text does not linger on the clipboard.
     */
    private void paste(StringBuilder pending) throws Exception {
        if (pending.length() == 0) return;
        String text = pending.toString();
        pending.setLength(0);
        ClipData previous;
        try {
            previous = clipboard.getClip();
        } catch (AndroidApi.Failure unreadable) {
            previous = null;
        }
        clipboard.setText(text);
        ClipData restore = previous != null ? previous : ClipData.newPlainText("", "");
        try {
            long now = SystemClock.uptimeMillis();
            if (Build.VERSION.SDK_INT >= 24) {
                input.inject(keyEvent(now, KeyEvent.ACTION_DOWN, KEYCODE_PASTE, 0));
                input.inject(keyEvent(now, KeyEvent.ACTION_UP, KEYCODE_PASTE, 0));
            } else {
                int ctrl = KeyEvent.META_CTRL_ON | KeyEvent.META_CTRL_LEFT_ON;
                input.inject(keyEvent(now, KeyEvent.ACTION_DOWN, KeyEvent.KEYCODE_CTRL_LEFT, ctrl));
                input.inject(keyEvent(now, KeyEvent.ACTION_DOWN, KeyEvent.KEYCODE_V, ctrl));
                input.inject(keyEvent(now, KeyEvent.ACTION_UP, KeyEvent.KEYCODE_V, ctrl));
                input.inject(keyEvent(now, KeyEvent.ACTION_UP, KeyEvent.KEYCODE_CTRL_LEFT, 0));
            }
        } catch (Exception pasteFailed) {
            try {
                clipboard.setClip(restore);
            } catch (AndroidApi.Failure restoreFailed) {
                // The paste's failure is the one to report; the clipboard keeps the text.
            }
            throw pasteFailed;
        }
        clipboard.setClip(restore);
    }
}

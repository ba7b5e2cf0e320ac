package dev.devicebridge.glassagent;

import android.os.SystemClock;
import android.view.InputDevice;
import android.view.KeyCharacterMap;
import android.view.KeyEvent;
import android.view.MotionEvent;
import dev.devicebridge.glassagent.core.Agent;
import dev.devicebridge.glassagent.core.Chord;
import dev.devicebridge.glassagent.core.PointerSample;
import java.util.List;

/** {@link Agent} on a device, as the shell uid: hidden services through {@link ClipboardService} and {@link InputService}. */
final class AndroidAgent implements Agent {
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
            inject(down, at, action, s);
            if (i == last) inject(down, at, MotionEvent.ACTION_UP, s);
        }
    }

    private void inject(long down, long at, int action, PointerSample s) throws Exception {
        MotionEvent e = MotionEvent.obtain(down, at, action, (float) s.x, (float) s.y, 0);
        e.setSource(InputDevice.SOURCE_TOUCHSCREEN);
        try {
            input.inject(e);
        } finally {
            e.recycle();
        }
    }

    @Override
    public void key(Chord chord) throws Exception {
        long now = SystemClock.uptimeMillis();
        int meta = 0;
        for (int code : chord.modifierKeyCodes) {
            input.inject(new KeyEvent(now, now, KeyEvent.ACTION_DOWN, code, 0, meta));
        }
        meta = chord.metaState;
        input.inject(new KeyEvent(now, now, KeyEvent.ACTION_DOWN, chord.keyCode, 0, meta));
        input.inject(new KeyEvent(now, now, KeyEvent.ACTION_UP, chord.keyCode, 0, meta));
        for (int i = chord.modifierKeyCodes.length - 1; i >= 0; i--) {
            input.inject(new KeyEvent(now, now, KeyEvent.ACTION_UP, chord.modifierKeyCodes[i], 0, 0));
        }
    }

    /**
     * Characters the virtual keyboard map can type are sent as key events; anything else (CJK,
     * emoji, …) as one ACTION_MULTIPLE event carrying the characters, so Unicode arrives intact.
     */
    @Override
    public void text(String text) throws Exception {
        KeyCharacterMap map = KeyCharacterMap.load(KeyCharacterMap.VIRTUAL_KEYBOARD);
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            String one = new String(Character.toChars(cp));
            KeyEvent[] events = map.getEvents(one.toCharArray());
            if (events != null) {
                for (KeyEvent e : events) input.inject(e);
            } else {
                long now = SystemClock.uptimeMillis();
                input.inject(new KeyEvent(now, one, KeyCharacterMap.VIRTUAL_KEYBOARD, 0));
            }
            i += Character.charCount(cp);
        }
    }
}

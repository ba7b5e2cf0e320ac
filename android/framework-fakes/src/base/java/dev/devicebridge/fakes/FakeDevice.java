package dev.devicebridge.fakes;

import android.content.ClipData;
import android.view.InputEvent;
import android.view.KeyEvent;
import android.view.MotionEvent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The control API adapter tests use to set up and inspect the fake device: the injected input
 * events, the focused text field the fake input dispatcher types into, the clipboard, the lock
 * screen, the OEM injection-security switch, and local socket clients with a chosen uid.
 *
 * <p>Every piece of state lives in one of the small classes below ({@link Input}, {@link
 * Clipboard}, {@link Screen}, {@link Sockets}); a fake of another framework class keeps its own
 * state the same way and registers a {@link #onReset reset hook}. Tests call {@link #reset()} in
 * {@code @Before}.
 */
public final class FakeDevice {
    private FakeDevice() {}

    private static final List<Runnable> RESET_HOOKS = new ArrayList<Runnable>();

    public static Profile profile() {
        return Profile.current();
    }

    /** A fake's own static state, cleared by every {@link #reset()}. */
    public static synchronized void onReset(Runnable hook) {
        RESET_HOOKS.add(hook);
    }

    /** A fresh device: no events, an empty focused field, no clip, unlocked, security switch off. */
    public static synchronized void reset() {
        Input.reset();
        Clipboard.reset();
        Screen.reset();
        Sockets.reset();
        for (Runnable hook : new ArrayList<Runnable>(RESET_HOOKS)) hook.run();
    }

    // ---------------------------------------------------------------------------------------------

    /** The input dispatcher: what was injected, and the focused text field it typed into. */
    public static final class Input {
        private Input() {}

        private static final List<InputEvent> EVENTS = new ArrayList<InputEvent>();
        private static final StringBuilder FIELD = new StringBuilder();
        private static int pendingAccent;
        private static boolean securitySettingOn;
        private static RuntimeException failure;
        /** KeyEvent.KEYCODE_PASTE, API 24 (absent from the API-23 surface the fakes mirror). */
        public static final int KEYCODE_PASTE = 279;

        static synchronized void reset() {
            EVENTS.clear();
            FIELD.setLength(0);
            pendingAccent = 0;
            securitySettingOn = false;
            failure = null;
        }

        /** Every event the dispatcher accepted, in order (copies). */
        public static synchronized List<InputEvent> events() {
            return Collections.unmodifiableList(new ArrayList<InputEvent>(EVENTS));
        }

        public static synchronized List<KeyEvent> keyEvents() {
            List<KeyEvent> keys = new ArrayList<KeyEvent>();
            for (InputEvent e : EVENTS) {
                if (e instanceof KeyEvent) keys.add((KeyEvent) e);
            }
            return keys;
        }

        public static synchronized List<MotionEvent> motionEvents() {
            List<MotionEvent> motions = new ArrayList<MotionEvent>();
            for (InputEvent e : EVENTS) {
                if (e instanceof MotionEvent) motions.add((MotionEvent) e);
            }
            return motions;
        }

        /** The focused text field's content, as the key events and pastes left it. */
        public static synchronized String focusedText() {
            return FIELD.toString();
        }

        /**
         * The OEM switch ("USB debugging (Security settings)" on MIUI/HyperOS, "Disable permission
         * monitoring" on ColorOS): while off, such a profile refuses injection from the shell.
         */
        public static synchronized void setSecuritySettingOn(boolean on) {
            securitySettingOn = on;
        }

        /** Every following injection throws {@code e} (as the system service would), until reset. */
        public static synchronized void failWith(RuntimeException e) {
            failure = e;
        }

        /**
         * The system side of injectInputEvent (InputManagerService.injectInputEventToTarget and
         * InputDispatcher::injectInputEvent): refuses what a device refuses, records and applies
         * the rest. Returns false where the platform returns false.
         */
        public static synchronized boolean inject(InputEvent event, int mode) {
            if (mode < 0 || mode > 2) throw new IllegalArgumentException("mode is invalid");
            if (failure != null) throw failure;
            Profile p = profile();
            if (p.blocksInjection() && !securitySettingOn) {
                // What InputManagerService throws for INJECTION_PERMISSION_DENIED: the wording
                // changed in Android 12 (scrcpy matches on "INJECT_EVENTS permission").
                throw new SecurityException(p.atLeast(31)
                        ? "Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission."
                        : "Injecting to another application requires INJECT_EVENTS permission");
            }
            if (event instanceof KeyEvent) {
                KeyEvent k = (KeyEvent) event;
                // InputDispatcher's validateKeyEvent: only ACTION_DOWN and ACTION_UP are injectable.
                if (k.getAction() != KeyEvent.ACTION_DOWN && k.getAction() != KeyEvent.ACTION_UP) return false;
                EVENTS.add(new KeyEvent(k));
                if (k.getAction() == KeyEvent.ACTION_DOWN) type(k);
                return true;
            }
            if (event instanceof MotionEvent) {
                MotionEvent m = (MotionEvent) event;
                if (m.isRecycled()) throw new IllegalStateException("MotionEvent already recycled");
                EVENTS.add(MotionEvent.obtain(m));
                return true;
            }
            throw new IllegalArgumentException("unknown input event " + event);
        }

        /** What a focused EditText does with a key down: type, delete, compose, paste. */
        private static void type(KeyEvent k) {
            int code = k.getKeyCode();
            int meta = k.getMetaState();
            if (code == KeyEvent.KEYCODE_DEL) {
                if (FIELD.length() > 0) FIELD.setLength(FIELD.offsetByCodePoints(FIELD.length(), -1));
                return;
            }
            boolean paste = (profile().atLeast(24) && code == KEYCODE_PASTE)
                    || (code == KeyEvent.KEYCODE_V && (meta & KeyEvent.META_CTRL_ON) != 0);
            if (paste) {
                ClipData clip = Clipboard.current();
                if (clip != null && clip.getItemCount() > 0 && clip.getItemAt(0).getText() != null) {
                    FIELD.append(clip.getItemAt(0).getText());
                }
                return;
            }
            if ((meta & (KeyEvent.META_CTRL_ON | KeyEvent.META_META_ON)) != 0) return;
            int c = k.getUnicodeChar(meta);
            if (c == 0) return;
            if ((c & android.view.KeyCharacterMap.COMBINING_ACCENT) != 0) {
                pendingAccent = c & android.view.KeyCharacterMap.COMBINING_ACCENT_MASK;
                return;
            }
            if (pendingAccent != 0) {
                int composed = android.view.KeyCharacterMap.getDeadChar(pendingAccent, c);
                pendingAccent = 0;
                if (composed != 0) c = composed;
            }
            FIELD.appendCodePoint(c);
        }
    }

    // ---------------------------------------------------------------------------------------------

    /** ClipboardService's state for user 0, and who called it with what. */
    public static final class Clipboard {
        private Clipboard() {}

        private static ClipData clip;
        private static boolean accessDenied;
        private static int writes;
        private static final List<String> CALLS = new ArrayList<String>();

        static synchronized void reset() {
            clip = null;
            accessDenied = false;
            writes = 0;
            CALLS.clear();
        }

        /** What the user copied (no clip for null). Not counted as a write. */
        public static synchronized void userCopies(String text) {
            clip = text == null ? null : ClipData.newPlainText("user", text);
        }

        /** The clip's text, or null when there is no clip. */
        public static synchronized String text() {
            if (clip == null || clip.getItemCount() == 0) return null;
            CharSequence t = clip.getItemAt(0).getText();
            return t == null ? null : t.toString();
        }

        public static synchronized ClipData current() {
            return clip;
        }

        /** The app op OP_READ_CLIPBOARD (or an OEM's equivalent) denies the shell. */
        public static synchronized void denyAccess(boolean denied) {
            accessDenied = denied;
        }

        /** setPrimaryClip calls so far. */
        public static synchronized int writes() {
            return writes;
        }

        /** Each IClipboard call as "method(arg, arg, ...)", in order. */
        public static synchronized List<String> calls() {
            return new ArrayList<String>(CALLS);
        }

        /** For the IClipboard fake: records the call, checks the caller as ClipboardService does. */
        public static synchronized void record(String method, Object[] args) {
            StringBuilder b = new StringBuilder(method).append('(');
            for (int i = 0; i < args.length; i++) {
                if (i > 0) b.append(", ");
                b.append(args[i] instanceof ClipData ? "clip" : String.valueOf(args[i]));
            }
            CALLS.add(b.append(')').toString());
        }

        /** ClipboardService.getPrimaryClip (see android.content.IClipboard for the rules). */
        public static synchronized ClipData get(String callingPackage, int userId) {
            check(callingPackage, userId);
            if (accessDenied) return null;
            if (profile().atLeast(26) && Screen.locked) return null;
            return clip;
        }

        public static synchronized void set(ClipData newClip, String callingPackage, int userId) {
            check(callingPackage, userId);
            if (newClip == null) throw new NullPointerException("clip");
            if (accessDenied) return;
            writes++;
            clip = newClip;
        }

        private static void check(String callingPackage, int userId) {
            // AppOpsManager.checkPackage: the package must belong to the calling uid (shell, 2000).
            if (!"com.android.shell".equals(callingPackage)) {
                throw new SecurityException("Package " + callingPackage + " does not belong to 2000");
            }
            if (userId != 0) throw new SecurityException("Permission Denial: user " + userId + " from uid 2000");
        }
    }

    // ---------------------------------------------------------------------------------------------

    /** The keyguard. */
    public static final class Screen {
        private Screen() {}

        static boolean locked;

        static synchronized void reset() {
            locked = false;
        }

        public static synchronized void setLocked(boolean value) {
            locked = value;
        }

        public static synchronized boolean locked() {
            return locked;
        }
    }

    // ---------------------------------------------------------------------------------------------

    /** The abstract local socket namespace. */
    public static final class Sockets {
        private Sockets() {}

        static synchronized void reset() {
            FakeSockets.reset();
        }

        /** Connects to localabstract:NAME as a process of uid {@code uid} (0 root, 2000 shell). */
        public static FakeSockets.Client connect(String name, int uid) throws java.io.IOException {
            return FakeSockets.connect(name, uid);
        }
    }
}

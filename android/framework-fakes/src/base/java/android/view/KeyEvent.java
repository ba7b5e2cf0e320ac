/*
 * Fake of frameworks/base/core/java/android/view/KeyEvent.java @ android-14.0.0_r1: the public API
 * 23 constructors, getters and constants the adapters use. A KeyEvent built without a source has
 * source SOURCE_UNKNOWN (0), as on a device. KEYCODE_PASTE (279, API 24) is deliberately absent:
 * adapters compile against API 23 and must use the number.
 */
package android.view;

public class KeyEvent extends InputEvent {
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public static final int ACTION_MULTIPLE = 2;

    public static final int KEYCODE_UNKNOWN = 0;
    public static final int KEYCODE_0 = 7;
    public static final int KEYCODE_A = 29;
    public static final int KEYCODE_C = 31;
    public static final int KEYCODE_E = 33;
    public static final int KEYCODE_I = 37;
    public static final int KEYCODE_N = 42;
    public static final int KEYCODE_U = 49;
    public static final int KEYCODE_V = 50;
    public static final int KEYCODE_COMMA = 55;
    public static final int KEYCODE_PERIOD = 56;
    public static final int KEYCODE_ALT_LEFT = 57;
    public static final int KEYCODE_ALT_RIGHT = 58;
    public static final int KEYCODE_SHIFT_LEFT = 59;
    public static final int KEYCODE_TAB = 61;
    public static final int KEYCODE_SPACE = 62;
    public static final int KEYCODE_ENTER = 66;
    public static final int KEYCODE_DEL = 67;
    public static final int KEYCODE_GRAVE = 68;
    public static final int KEYCODE_MINUS = 69;
    public static final int KEYCODE_EQUALS = 70;
    public static final int KEYCODE_LEFT_BRACKET = 71;
    public static final int KEYCODE_RIGHT_BRACKET = 72;
    public static final int KEYCODE_BACKSLASH = 73;
    public static final int KEYCODE_SEMICOLON = 74;
    public static final int KEYCODE_APOSTROPHE = 75;
    public static final int KEYCODE_SLASH = 76;
    public static final int KEYCODE_CTRL_LEFT = 113;
    public static final int KEYCODE_META_LEFT = 117;

    public static final int META_SHIFT_ON = 0x1;
    public static final int META_ALT_ON = 0x02;
    public static final int META_ALT_LEFT_ON = 0x10;
    public static final int META_ALT_RIGHT_ON = 0x20;
    public static final int META_SHIFT_LEFT_ON = 0x40;
    public static final int META_CTRL_ON = 0x1000;
    public static final int META_CTRL_LEFT_ON = 0x2000;
    public static final int META_META_ON = 0x10000;
    public static final int META_META_LEFT_ON = 0x20000;

    public static final int FLAG_SOFT_KEYBOARD = 0x2;
    public static final int FLAG_KEEP_TOUCH_MODE = 0x4;
    public static final int FLAG_FROM_SYSTEM = 0x8;

    private final long downTime;
    private final long eventTime;
    private final int action;
    private final int keyCode;
    private final int repeat;
    private final int metaState;
    private final int deviceId;
    private final int scanCode;
    private final int flags;
    private int source;
    private final String characters;

    public KeyEvent(int action, int code) {
        this(0, 0, action, code, 0, 0, KeyCharacterMap.VIRTUAL_KEYBOARD, 0, 0, InputDevice.SOURCE_UNKNOWN);
    }

    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat, int metaState) {
        this(downTime, eventTime, action, code, repeat, metaState, KeyCharacterMap.VIRTUAL_KEYBOARD, 0, 0, InputDevice.SOURCE_UNKNOWN);
    }

    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat, int metaState, int deviceId, int scancode) {
        this(downTime, eventTime, action, code, repeat, metaState, deviceId, scancode, 0, InputDevice.SOURCE_UNKNOWN);
    }

    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat, int metaState, int deviceId, int scancode, int flags) {
        this(downTime, eventTime, action, code, repeat, metaState, deviceId, scancode, flags, InputDevice.SOURCE_UNKNOWN);
    }

    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat, int metaState, int deviceId, int scancode,
            int flags, int source) {
        this.downTime = downTime;
        this.eventTime = eventTime;
        this.action = action;
        this.keyCode = code;
        this.repeat = repeat;
        this.metaState = metaState;
        this.deviceId = deviceId;
        this.scanCode = scancode;
        this.flags = flags;
        this.source = source;
        this.characters = null;
    }

    /** ACTION_MULTIPLE with KEYCODE_UNKNOWN carrying {@code characters}. */
    public KeyEvent(long time, String characters, int deviceId, int flags) {
        this.downTime = time;
        this.eventTime = time;
        this.action = ACTION_MULTIPLE;
        this.keyCode = KEYCODE_UNKNOWN;
        this.repeat = 0;
        this.metaState = 0;
        this.deviceId = deviceId;
        this.scanCode = 0;
        this.flags = flags;
        this.source = InputDevice.SOURCE_KEYBOARD;
        this.characters = characters;
    }

    public KeyEvent(KeyEvent origEvent) {
        this.downTime = origEvent.downTime;
        this.eventTime = origEvent.eventTime;
        this.action = origEvent.action;
        this.keyCode = origEvent.keyCode;
        this.repeat = origEvent.repeat;
        this.metaState = origEvent.metaState;
        this.deviceId = origEvent.deviceId;
        this.scanCode = origEvent.scanCode;
        this.flags = origEvent.flags;
        this.source = origEvent.source;
        this.characters = origEvent.characters;
    }

    public final int getAction() {
        return action;
    }

    public final int getKeyCode() {
        return keyCode;
    }

    public final int getRepeatCount() {
        return repeat;
    }

    public final int getMetaState() {
        return metaState;
    }

    public final int getFlags() {
        return flags;
    }

    public final int getScanCode() {
        return scanCode;
    }

    public final long getDownTime() {
        return downTime;
    }

    @Override
    public final long getEventTime() {
        return eventTime;
    }

    @Override
    public final int getDeviceId() {
        return deviceId;
    }

    @Override
    public final int getSource() {
        return source;
    }

    @Override
    public final void setSource(int source) {
        this.source = source;
    }

    public final String getCharacters() {
        return characters;
    }

    public int getUnicodeChar() {
        return getUnicodeChar(metaState);
    }

    public int getUnicodeChar(int metaState) {
        return KeyCharacterMap.load(deviceId).get(keyCode, metaState);
    }

    @Override
    public String toString() {
        return "KeyEvent { action=" + action + ", keyCode=" + keyCode + ", metaState=0x" + Integer.toHexString(metaState)
                + ", source=0x" + Integer.toHexString(source) + ", deviceId=" + deviceId + (characters == null ? "" : ", characters=" + characters) + " }";
    }
}

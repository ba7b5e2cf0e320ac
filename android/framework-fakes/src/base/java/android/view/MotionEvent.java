/*
 * Fake of frameworks/base/core/java/android/view/MotionEvent.java @ android-14.0.0_r1: the public
 * API 23 obtain() overloads, pointer properties and coordinates, source, recycle. The simple
 * obtain(downTime, eventTime, action, x, y, metaState) gives one pointer of id 0 and tool type
 * TOOL_TYPE_UNKNOWN (PointerProperties.clear()), as AOSP does; an injected touch should carry
 * TOOL_TYPE_FINGER.
 */
package android.view;

public final class MotionEvent extends InputEvent {
    public static final int ACTION_MASK = 0xff;
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public static final int ACTION_MOVE = 2;
    public static final int ACTION_CANCEL = 3;
    public static final int TOOL_TYPE_UNKNOWN = 0;
    public static final int TOOL_TYPE_FINGER = 1;
    public static final int TOOL_TYPE_STYLUS = 2;
    public static final int TOOL_TYPE_MOUSE = 3;
    public static final int BUTTON_PRIMARY = 1;

    public static final class PointerProperties {
        public int id;
        public int toolType;

        public PointerProperties() {
            clear();
        }

        public PointerProperties(PointerProperties other) {
            id = other.id;
            toolType = other.toolType;
        }

        public void clear() {
            id = -1;
            toolType = TOOL_TYPE_UNKNOWN;
        }
    }

    public static final class PointerCoords {
        public float x;
        public float y;
        public float pressure;
        public float size;

        public PointerCoords() {}

        public PointerCoords(PointerCoords other) {
            x = other.x;
            y = other.y;
            pressure = other.pressure;
            size = other.size;
        }

        public void clear() {
            x = y = pressure = size = 0;
        }
    }

    private long downTime;
    private long eventTime;
    private int action;
    private PointerProperties[] properties;
    private PointerCoords[] coords;
    private int metaState;
    private int buttonState;
    private int deviceId;
    private int source;
    private int flags;
    private boolean recycled;

    private MotionEvent() {}

    public static MotionEvent obtain(long downTime, long eventTime, int action, int pointerCount, PointerProperties[] pointerProperties,
            PointerCoords[] pointerCoords, int metaState, int buttonState, float xPrecision, float yPrecision, int deviceId,
            int edgeFlags, int source, int flags) {
        if (pointerCount < 1 || pointerProperties.length < pointerCount || pointerCoords.length < pointerCount) {
            throw new IllegalArgumentException("pointerCount must be at least 1 and fit the arrays");
        }
        MotionEvent e = new MotionEvent();
        e.downTime = downTime;
        e.eventTime = eventTime;
        e.action = action;
        e.properties = new PointerProperties[pointerCount];
        e.coords = new PointerCoords[pointerCount];
        for (int i = 0; i < pointerCount; i++) {
            e.properties[i] = new PointerProperties(pointerProperties[i]);
            e.coords[i] = new PointerCoords(pointerCoords[i]);
        }
        e.metaState = metaState;
        e.buttonState = buttonState;
        e.deviceId = deviceId;
        e.source = source;
        e.flags = flags;
        return e;
    }

    public static MotionEvent obtain(long downTime, long eventTime, int action, float x, float y, int metaState) {
        PointerProperties p = new PointerProperties();
        p.id = 0;
        PointerCoords c = new PointerCoords();
        c.x = x;
        c.y = y;
        c.pressure = 1;
        c.size = 1;
        return obtain(downTime, eventTime, action, 1, new PointerProperties[] {p}, new PointerCoords[] {c}, metaState, 0, 1, 1, 0, 0,
                InputDevice.SOURCE_UNKNOWN, 0);
    }

    public static MotionEvent obtain(MotionEvent other) {
        return obtain(other.downTime, other.eventTime, other.action, other.properties.length, other.properties, other.coords,
                other.metaState, other.buttonState, 1, 1, other.deviceId, 0, other.source, other.flags);
    }

    public void recycle() {
        if (recycled) throw new RuntimeException(this + " recycled twice!");
        recycled = true;
    }

    /** Not on a device: lets the fake dispatcher refuse a recycled event. */
    public boolean isRecycled() {
        return recycled;
    }

    public int getAction() {
        return action;
    }

    public int getActionMasked() {
        return action & ACTION_MASK;
    }

    public int getPointerCount() {
        return properties.length;
    }

    public int getPointerId(int index) {
        return properties[index].id;
    }

    public int getToolType(int index) {
        return properties[index].toolType;
    }

    public float getX() {
        return coords[0].x;
    }

    public float getY() {
        return coords[0].y;
    }

    public float getX(int index) {
        return coords[index].x;
    }

    public float getY(int index) {
        return coords[index].y;
    }

    public float getPressure() {
        return coords[0].pressure;
    }

    public int getMetaState() {
        return metaState;
    }

    public int getButtonState() {
        return buttonState;
    }

    public long getDownTime() {
        return downTime;
    }

    @Override
    public long getEventTime() {
        return eventTime;
    }

    @Override
    public int getDeviceId() {
        return deviceId;
    }

    @Override
    public int getSource() {
        return source;
    }

    @Override
    public void setSource(int source) {
        this.source = source;
    }

    @Override
    public String toString() {
        return "MotionEvent { action=" + action + ", x=" + coords[0].x + ", y=" + coords[0].y + ", toolType=" + properties[0].toolType
                + ", source=0x" + Integer.toHexString(source) + " }";
    }
}

/*
 * Fake of frameworks/base/core/java/android/accessibilityservice/AccessibilityServiceInfo.java
 * @ android-14.0.0_r1: the public flags field and the flag constants of the API-23 surface.
 */
package android.accessibilityservice;

public class AccessibilityServiceInfo {
    public static final int DEFAULT = 0x0000001;
    public static final int FLAG_INCLUDE_NOT_IMPORTANT_VIEWS = 0x0000002;
    public static final int FLAG_REQUEST_TOUCH_EXPLORATION_MODE = 0x0000004;
    public static final int FLAG_REQUEST_ENHANCED_WEB_ACCESSIBILITY = 0x00000008;
    public static final int FLAG_REPORT_VIEW_IDS = 0x00000010;
    public static final int FLAG_REQUEST_FILTER_KEY_EVENTS = 0x00000020;
    public static final int FLAG_RETRIEVE_INTERACTIVE_WINDOWS = 0x00000040;

    public int eventTypes;
    public int feedbackType;
    public int flags;
    public long notificationTimeout;

    public AccessibilityServiceInfo() {}

    /** Fake-only: a copy, as each getServiceInfo() on a device unparcels a new object. */
    public AccessibilityServiceInfo copy() {
        AccessibilityServiceInfo c = new AccessibilityServiceInfo();
        c.eventTypes = eventTypes;
        c.feedbackType = feedbackType;
        c.flags = flags;
        c.notificationTimeout = notificationTimeout;
        return c;
    }
}

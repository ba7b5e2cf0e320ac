/* Fake of frameworks/base/core/java/android/view/accessibility/AccessibilityEvent.java @ android-14.0.0_r1: only the type the service's callback names. */
package android.view.accessibility;

public final class AccessibilityEvent {
    private int eventType;

    public int getEventType() {
        return eventType;
    }

    public void setEventType(int eventType) {
        this.eventType = eventType;
    }
}

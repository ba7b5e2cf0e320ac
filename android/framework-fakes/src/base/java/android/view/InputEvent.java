/* Fake of frameworks/base/core/java/android/view/InputEvent.java @ android-14.0.0_r1. */
package android.view;

public abstract class InputEvent {
    InputEvent() {}

    public abstract int getDeviceId();

    public abstract int getSource();

    public abstract void setSource(int source);

    public abstract long getEventTime();
}

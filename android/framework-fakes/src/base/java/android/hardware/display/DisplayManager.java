/*
 * Fake of frameworks/base/core/java/android/hardware/display/DisplayManager.java as of API 23-33:
 * no hidden static createVirtualDisplay(String, int, int, int displayIdToMirror, Surface) (that
 * arrives with API 34: the overlay framework-fakes/src/api34 replaces this class). Adapters reach
 * the class by reflection only.
 */
package android.hardware.display;

public final class DisplayManager {
    public static final int VIRTUAL_DISPLAY_FLAG_AUTO_MIRROR = 16;

    private DisplayManager() {}
}

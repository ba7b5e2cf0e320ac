/*
 * Fake of the hidden frameworks/base/core/java/android/view/DisplayInfo.java @ android-14.0.0_r1:
 * the public fields adapters read by reflection (logicalWidth/logicalHeight already swapped by the
 * rotation, rotation as Surface.ROTATION_*, layerStack), filled from dev.devicebridge.fakes.FakeDisplays.
 */
package android.view;

public final class DisplayInfo {
    public int layerStack;
    public int flags;
    public int logicalWidth;
    public int logicalHeight;
    public int rotation;
    public int logicalDensityDpi;

    public DisplayInfo() {}
}

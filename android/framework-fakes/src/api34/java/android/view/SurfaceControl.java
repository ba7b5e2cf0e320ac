/*
 * Fake of the hidden static display API of frameworks/base/core/java/android/view/SurfaceControl.java
 * from API 34 (android-14.0.0_r29 and later; Pixel builds from March 2024): createDisplay and
 * destroyDisplay are gone (AOSP "Delete Unsupported APIs", December 2023), so
 * getMethod("createDisplay", String, boolean) throws NoSuchMethodException, as scrcpy users saw on
 * Android 14 QPR2 and 15. The transaction methods remain. Replaces the base class for profiles >= 34.
 */
package android.view;

import android.graphics.Rect;
import android.os.IBinder;
import dev.devicebridge.fakes.FakeDisplays;

public final class SurfaceControl {
    private SurfaceControl() {}

    public static void openTransaction() {
        FakeDisplays.SurfaceControlState.openTransaction();
    }

    public static void closeTransaction() {
        FakeDisplays.SurfaceControlState.closeTransaction();
    }

    public static void setDisplaySurface(IBinder displayToken, Surface surface) {
        FakeDisplays.SurfaceControlState.setDisplaySurface(displayToken, surface);
    }

    public static void setDisplayProjection(IBinder displayToken, int orientation, Rect layerStackRect, Rect displayRect) {
        FakeDisplays.SurfaceControlState.setDisplayProjection(displayToken, orientation, layerStackRect, displayRect);
    }

    public static void setDisplayLayerStack(IBinder displayToken, int layerStack) {
        FakeDisplays.SurfaceControlState.setDisplayLayerStack(displayToken, layerStack);
    }
}

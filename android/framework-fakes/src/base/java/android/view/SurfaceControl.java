/*
 * Fake of the hidden static display API of frameworks/base/core/java/android/view/SurfaceControl.java
 * as of API 23-33 (android-13.0.0_r1): createDisplay(name, secure) → a display token,
 * destroyDisplay, and the global transaction (openTransaction, setDisplaySurface,
 * setDisplayProjection, setDisplayLayerStack, closeTransaction: the display starts mirroring the
 * layer stack when the transaction closes). From Android 12 the shell may not create a secure
 * display (createDisplay(name, true) throws SecurityException, as scrcpy found). On API 34+ the
 * overlay framework-fakes/src/api34 replaces this class: createDisplay and destroyDisplay were
 * deleted from AOSP in December 2023 ("Delete Unsupported APIs"; Pixel builds from March 2024).
 */
package android.view;

import android.graphics.Rect;
import android.os.Build;
import android.os.IBinder;
import dev.devicebridge.fakes.FakeDisplays;

public final class SurfaceControl {
    private SurfaceControl() {}

    public static IBinder createDisplay(String name, boolean secure) {
        if (secure && Build.VERSION.SDK_INT >= 31) {
            throw new SecurityException("Permission denial: createDisplay secure display requires CAPTURE_SECURE_VIDEO_OUTPUT");
        }
        return FakeDisplays.SurfaceControlState.createDisplay(name, secure);
    }

    public static void destroyDisplay(IBinder displayToken) {
        FakeDisplays.SurfaceControlState.destroyDisplay(displayToken);
    }

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

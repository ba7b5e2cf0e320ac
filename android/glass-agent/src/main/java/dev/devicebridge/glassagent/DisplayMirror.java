package dev.devicebridge.glassagent;

import android.graphics.Rect;
import android.hardware.display.VirtualDisplay;
import android.os.Build;
import android.os.IBinder;
import android.view.Surface;
import dev.devicebridge.glass.common.JsonLineProtocol;
import java.lang.reflect.Method;

/**
 * Display 0 mirrored into an encoder's input surface, the way scrcpy's ScreenCapture does it, by
 * the first path that works:
 *
 * <ol>
 *   <li>{@code DisplayManager.createVirtualDisplay(name, width, height, displayIdToMirror, surface)}:
 *       a hidden static method (Android 14 / API 34 on), an auto-mirroring virtual display created
 *       as the shell's package; the system scales the display into the picture;
 *   <li>{@code SurfaceControl.createDisplay(name, secure)} and, in one global transaction,
 *       setDisplaySurface, setDisplayProjection (the whole display onto the whole picture) and
 *       setDisplayLayerStack (the display's): up to Android 13, and on Android 14 builds from
 *       before its removal (AOSP deleted it in December 2023). The display is secure (protected
 *       content shows) before Android 11; from Android 12 the shell may not create one.
 * </ol>
 */
final class DisplayMirror {
    static final String NAME = "devicebridge-screen";
    static final String VIRTUAL_DISPLAY = "DisplayManager.createVirtualDisplay";
    static final String SURFACE_CONTROL = "SurfaceControl.createDisplay";

    private final String path;
    private final VirtualDisplay virtualDisplay;
    private final IBinder token;

    private DisplayMirror(String path, VirtualDisplay virtualDisplay, IBinder token) {
        this.path = path;
        this.virtualDisplay = virtualDisplay;
        this.token = token;
    }

    /** Which path mirrors (VIRTUAL_DISPLAY or SURFACE_CONTROL). */
    String path() {
        return path;
    }

    /**
     * The paths this device has (the methods exist), in the order tried; empty when it has
     * neither. Whether a path works shows only when it is used.
     */
    static String available() {
        StringBuilder b = new StringBuilder();
        if (virtualDisplayMethod() != null) b.append(VIRTUAL_DISPLAY);
        if (createDisplayMethod() != null) b.append(b.length() > 0 ? ", " : "").append(SURFACE_CONTROL);
        return b.toString();
    }

    private static Method virtualDisplayMethod() {
        try {
            return Class.forName("android.hardware.display.DisplayManager")
                    .getMethod("createVirtualDisplay", String.class, int.class, int.class, int.class, Surface.class);
        } catch (ClassNotFoundException e) {
            return null;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static Method createDisplayMethod() {
        try {
            return Class.forName("android.view.SurfaceControl").getMethod("createDisplay", String.class, boolean.class);
        } catch (ClassNotFoundException e) {
            return null;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** Mirrors display 0 ({@code displayWidth}x{@code displayHeight}, its layer stack) into {@code surface} at the picture's size. */
    static DisplayMirror open(Surface surface, int videoWidth, int videoHeight, int displayWidth, int displayHeight, int layerStack) throws AndroidApi.Failure {
        String first;
        Method vd = virtualDisplayMethod();
        if (vd != null) {
            try {
                Object display = AndroidApi.invoke("DisplayManager.createVirtualDisplay", vd, null, NAME, videoWidth, videoHeight, DisplayReader.DEFAULT_DISPLAY, surface);
                if (display == null) throw AndroidApi.failed("DisplayManager.createVirtualDisplay", new NullPointerException("returned null"));
                return new DisplayMirror(VIRTUAL_DISPLAY, (VirtualDisplay) display, null);
            } catch (AndroidApi.Failure f) {
                first = f.getMessage();
            }
        } else {
            first = "DisplayManager.createVirtualDisplay(String, int, int, int, Surface) does not exist on API " + Build.VERSION.SDK_INT;
        }
        Method create = createDisplayMethod();
        if (create == null) {
            throw new AndroidApi.Failure("no way to mirror the display: " + first + "; SurfaceControl.createDisplay(String, boolean) does not exist on API "
                    + Build.VERSION.SDK_INT, null);
        }
        try {
            return surfaceControl(create, surface, videoWidth, videoHeight, displayWidth, displayHeight, layerStack);
        } catch (AndroidApi.Failure f) {
            throw new AndroidApi.Failure("no way to mirror the display: " + first + "; " + f.getMessage(), f.getCause());
        }
    }

    /** As scrcpy: secure before Android 11 and on Android 11 (not its Android 12 previews, "S"). */
    static boolean secure() {
        int sdk = Build.VERSION.SDK_INT;
        return sdk < 30 || (sdk == 30 && !"S".equals(Build.VERSION.CODENAME));
    }

    private static DisplayMirror surfaceControl(Method create, Surface surface, int vw, int vh, int dw, int dh, int layerStack) throws AndroidApi.Failure {
        Class<?> sc = create.getDeclaringClass();
        IBinder token = (IBinder) AndroidApi.invoke(SURFACE_CONTROL, create, null, NAME, secure());
        if (token == null) throw AndroidApi.failed(SURFACE_CONTROL, new NullPointerException("returned null"));
        try {
            Method open = sc.getMethod("openTransaction");
            Method close = sc.getMethod("closeTransaction");
            Method setSurface = sc.getMethod("setDisplaySurface", IBinder.class, Surface.class);
            Method setProjection = sc.getMethod("setDisplayProjection", IBinder.class, int.class, Rect.class, Rect.class);
            Method setLayerStack = sc.getMethod("setDisplayLayerStack", IBinder.class, int.class);
            AndroidApi.invoke("SurfaceControl.openTransaction", open, null);
            try {
                AndroidApi.invoke("SurfaceControl.setDisplaySurface", setSurface, null, token, surface);
                AndroidApi.invoke("SurfaceControl.setDisplayProjection", setProjection, null, token, 0, new Rect(0, 0, dw, dh), new Rect(0, 0, vw, vh));
                AndroidApi.invoke("SurfaceControl.setDisplayLayerStack", setLayerStack, null, token, layerStack);
            } finally {
                AndroidApi.invoke("SurfaceControl.closeTransaction", close, null);
            }
            return new DisplayMirror(SURFACE_CONTROL, null, token);
        } catch (NoSuchMethodException e) {
            destroy(token);
            throw AndroidApi.failed("SurfaceControl", e);
        } catch (AndroidApi.Failure f) {
            destroy(token);
            throw f;
        }
    }

    private static void destroy(IBinder token) {
        try {
            Class.forName("android.view.SurfaceControl").getMethod("destroyDisplay", IBinder.class).invoke(null, token);
        } catch (Exception e) {
            System.err.println("screen: SurfaceControl.destroyDisplay failed: " + JsonLineProtocol.describe(e));
        }
    }

    /** Ends the mirror. */
    void close() {
        if (virtualDisplay != null) virtualDisplay.release();
        if (token != null) destroy(token);
    }
}

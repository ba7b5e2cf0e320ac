package dev.devicebridge.fakes;

import android.graphics.Rect;
import android.hardware.display.VirtualDisplay;
import android.os.Binder;
import android.os.IBinder;
import android.view.DisplayInfo;
import android.view.Surface;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The display side of the fake device: display 0 (its natural size, rotation, layer stack), the
 * mirrors adapters create of it (DisplayManager's virtual display on API 34+, SurfaceControl's
 * display up to API 33), and drawing: {@link #draw()} is the screen changing, a picture for every
 * active mirror's surface (an encoder's input: a frame, see {@link FakeMedia}).
 */
public final class FakeDisplays {
    private FakeDisplays() {}

    static {
        FakeDevice.onReset(new Runnable() {
            @Override
            public void run() {
                reset();
            }
        });
    }

    private static int naturalWidth;
    private static int naturalHeight;
    private static int rotation;
    private static boolean unreadable;
    private static RuntimeException virtualDisplayFailure;
    private static final List<Mirror> MIRRORS = new ArrayList<Mirror>();
    private static final List<String> CALLS = new ArrayList<String>();

    static synchronized void reset() {
        naturalWidth = 1080;
        naturalHeight = 1920;
        rotation = 0;
        unreadable = false;
        virtualDisplayFailure = null;
        MIRRORS.clear();
        CALLS.clear();
        SurfaceControlState.reset();
    }

    static {
        reset();
    }

    /** One mirror of display 0 into a surface. */
    public static final class Mirror {
        public final String path;
        public final String name;
        public final int width;
        public final int height;
        public final Surface surface;
        private boolean active = true;

        Mirror(String path, String name, int width, int height, Surface surface) {
            this.path = path;
            this.name = name;
            this.width = width;
            this.height = height;
            this.surface = surface;
        }

        public void end() {
            synchronized (FakeDisplays.class) {
                active = false;
            }
        }

        public boolean active() {
            synchronized (FakeDisplays.class) {
                return active;
            }
        }

        @Override
        public String toString() {
            return path + " " + width + "x" + height + (active() ? "" : " (ended)");
        }
    }

    // --- control API -----------------------------------------------------------------------------

    /** The display's natural (rotation 0) size; default 1080x1920. */
    public static synchronized void setNaturalSize(int width, int height) {
        naturalWidth = width;
        naturalHeight = height;
    }

    /** Rotates the display (Surface.ROTATION_*): its logical size swaps for 90° and 270°. */
    public static synchronized void rotate(int value) {
        rotation = value;
    }

    /** getDisplayInfo(0) answers null (a display the service cannot describe for a moment). */
    public static synchronized void setUnreadable(boolean value) {
        unreadable = value;
    }

    /** DisplayManager.createVirtualDisplay throws {@code e} (e.g. a SecurityException of an OEM build). */
    public static synchronized void failVirtualDisplay(RuntimeException e) {
        virtualDisplayFailure = e;
    }

    /** Every mirror created so far, in order (ended ones too). */
    public static synchronized List<Mirror> mirrors() {
        return new ArrayList<Mirror>(MIRRORS);
    }

    public static synchronized List<Mirror> activeMirrors() {
        List<Mirror> list = new ArrayList<Mirror>();
        for (Mirror m : MIRRORS) {
            if (m.active) list.add(m);
        }
        return list;
    }

    /** The display API calls, in order ("createDisplay(name, secure=false)", "openTransaction()", ...). */
    public static synchronized List<String> calls() {
        return new ArrayList<String>(CALLS);
    }

    /** The screen changes: every active mirror draws a picture into its surface. */
    public static void draw() {
        List<Mirror> active = activeMirrors();
        for (Mirror m : active) {
            if (m.surface != null && m.surface.isValid() && m.surface.consumer instanceof FakeMedia.Encoder) {
                ((FakeMedia.Encoder) m.surface.consumer).frame();
            }
        }
    }

    // --- what the framework fakes call -------------------------------------------------------------

    public static synchronized DisplayInfo info(int displayId) {
        if (displayId != 0 || unreadable) return null;
        DisplayInfo info = new DisplayInfo();
        boolean swapped = rotation % 2 != 0;
        info.logicalWidth = swapped ? naturalHeight : naturalWidth;
        info.logicalHeight = swapped ? naturalWidth : naturalHeight;
        info.rotation = rotation;
        info.layerStack = 0;
        info.logicalDensityDpi = 420;
        return info;
    }

    public static synchronized VirtualDisplay createVirtualDisplay(String name, int width, int height, int displayIdToMirror, Surface surface) {
        CALLS.add("DisplayManager.createVirtualDisplay(" + name + ", " + width + ", " + height + ", " + displayIdToMirror + ")");
        if (virtualDisplayFailure != null) throw virtualDisplayFailure;
        if (displayIdToMirror != 0) return null;
        Mirror m = new Mirror("DisplayManager.createVirtualDisplay", name, width, height, surface);
        MIRRORS.add(m);
        return new VirtualDisplay(m);
    }

    /** SurfaceControl's display tokens and its global transaction. */
    public static final class SurfaceControlState {
        private SurfaceControlState() {}

        private static final class Pending {
            String name;
            Surface surface;
            Rect displayRect;
            int layerStack = -1;
            Mirror mirror;
        }

        private static final Map<IBinder, Pending> DISPLAYS = new IdentityHashMap<IBinder, Pending>();
        private static int transactionDepth;

        static void reset() {
            DISPLAYS.clear();
            transactionDepth = 0;
        }

        public static IBinder createDisplay(String name, boolean secure) {
            synchronized (FakeDisplays.class) {
                CALLS.add("SurfaceControl.createDisplay(" + name + ", secure=" + secure + ")");
                IBinder token = new Binder("display:" + name);
                Pending p = new Pending();
                p.name = name;
                DISPLAYS.put(token, p);
                return token;
            }
        }

        public static void destroyDisplay(IBinder token) {
            synchronized (FakeDisplays.class) {
                CALLS.add("SurfaceControl.destroyDisplay()");
                Pending p = DISPLAYS.remove(token);
                if (p == null) throw new IllegalArgumentException("displayToken must not be null");
                if (p.mirror != null) p.mirror.active = false;
            }
        }

        public static void openTransaction() {
            synchronized (FakeDisplays.class) {
                CALLS.add("SurfaceControl.openTransaction()");
                transactionDepth++;
            }
        }

        /** Applies the display settings: a display with a surface and a layer stack starts mirroring. */
        public static void closeTransaction() {
            synchronized (FakeDisplays.class) {
                CALLS.add("SurfaceControl.closeTransaction()");
                if (transactionDepth == 0) throw new IllegalStateException("closeTransaction without openTransaction");
                if (--transactionDepth > 0) return;
                for (Pending p : DISPLAYS.values()) {
                    if (p.mirror == null && p.surface != null && p.layerStack == 0 && p.displayRect != null) {
                        p.mirror = new Mirror("SurfaceControl.createDisplay", p.name, p.displayRect.width(), p.displayRect.height(), p.surface);
                        MIRRORS.add(p.mirror);
                    }
                }
            }
        }

        private static Pending pending(IBinder token) {
            Pending p = DISPLAYS.get(token);
            if (p == null) throw new IllegalArgumentException("displayToken must not be null");
            if (transactionDepth == 0) throw new IllegalStateException("display changes outside a transaction are not applied (fake: refused)");
            return p;
        }

        public static void setDisplaySurface(IBinder token, Surface surface) {
            synchronized (FakeDisplays.class) {
                CALLS.add("SurfaceControl.setDisplaySurface()");
                pending(token).surface = surface;
            }
        }

        public static void setDisplayProjection(IBinder token, int orientation, Rect layerStackRect, Rect displayRect) {
            synchronized (FakeDisplays.class) {
                CALLS.add("SurfaceControl.setDisplayProjection(" + orientation + ", " + layerStackRect.toShortString() + ", " + displayRect.toShortString() + ")");
                pending(token).displayRect = new Rect(displayRect);
            }
        }

        public static void setDisplayLayerStack(IBinder token, int layerStack) {
            synchronized (FakeDisplays.class) {
                CALLS.add("SurfaceControl.setDisplayLayerStack(" + layerStack + ")");
                pending(token).layerStack = layerStack;
            }
        }
    }
}

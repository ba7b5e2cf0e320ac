package dev.devicebridge.glassagent;

import dev.devicebridge.glassagent.core.DisplayState;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * Display 0 as the display manager describes it: the hidden DisplayManagerGlobal.getInstance()
 * .getDisplayInfo(0) (every release the agent runs on), whose DisplayInfo carries logicalWidth and
 * logicalHeight (already swapped by the rotation: the coordinates input uses), rotation and
 * layerStack (what SurfaceControl's mirror shows).
 */
final class DisplayReader {
    static final int DEFAULT_DISPLAY = 0;

    /** A reading: the state and the layer stack. */
    static final class Reading {
        final DisplayState state;
        final int layerStack;

        Reading(DisplayState state, int layerStack) {
            this.state = state;
            this.layerStack = layerStack;
        }
    }

    private Object global;
    private Method getDisplayInfo;

    /** The display now; null when the service answers no DisplayInfo (it may for a moment). */
    synchronized Reading read() throws AndroidApi.Failure {
        if (global == null) {
            try {
                Class<?> cls = Class.forName("android.hardware.display.DisplayManagerGlobal");
                Object instance = AndroidApi.invoke("DisplayManagerGlobal.getInstance", cls.getMethod("getInstance"), null);
                if (instance == null) throw AndroidApi.failed("DisplayManagerGlobal.getInstance", new NullPointerException("returned null"));
                getDisplayInfo = cls.getMethod("getDisplayInfo", int.class);
                global = instance;
            } catch (ClassNotFoundException e) {
                throw AndroidApi.failed("DisplayManagerGlobal", e);
            } catch (NoSuchMethodException e) {
                throw AndroidApi.failed("DisplayManagerGlobal", e);
            }
        }
        Object info = AndroidApi.invoke("DisplayManagerGlobal.getDisplayInfo(0)", getDisplayInfo, global, DEFAULT_DISPLAY);
        if (info == null) return null;
        try {
            int width = intField(info, "logicalWidth");
            int height = intField(info, "logicalHeight");
            int rotation = intField(info, "rotation");
            int layerStack = intField(info, "layerStack");
            return new Reading(new DisplayState(width, height, rotation), layerStack);
        } catch (NoSuchFieldException e) {
            throw AndroidApi.failed("DisplayInfo", e);
        } catch (IllegalAccessException e) {
            throw AndroidApi.failed("DisplayInfo", e);
        }
    }

    private static int intField(Object o, String name) throws NoSuchFieldException, IllegalAccessException {
        Field f = o.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.getInt(o);
    }
}

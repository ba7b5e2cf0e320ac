package dev.devicebridge.glassagent;

import android.content.ClipData;
import android.os.IBinder;
import java.lang.reflect.Method;

/**
 * The hidden IClipboard service (ServiceManager "clipboard"), through reflection: its method
 * signatures grew over API levels (calling package, then user id, then attribution tag and device
 * id), so the call adapts to the parameter count it finds.
 */
final class ClipboardService {
    private static final String SHELL_PACKAGE = "com.android.shell";

    private Object service;

    private synchronized Object service() throws Exception {
        if (service != null) return service;
        Class<?> sm = Class.forName("android.os.ServiceManager");
        IBinder binder = (IBinder) sm.getMethod("getService", String.class).invoke(null, "clipboard");
        Class<?> stub = Class.forName("android.content.IClipboard$Stub");
        service = stub.getMethod("asInterface", IBinder.class).invoke(null, binder);
        return service;
    }

    private static Method find(Object target, String name) {
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(name)) return m;
        }
        throw new IllegalStateException("IClipboard." + name + " not found");
    }

    /**
     * Arguments for {@code m}: {@code first} (the clip, for setPrimaryClip), then the first String
     * parameter is the calling package, later Strings (attribution tag) null, ints (user id, device
     * id) 0.
     */
    private static Object[] args(Method m, Object first) {
        Class<?>[] types = m.getParameterTypes();
        Object[] args = new Object[types.length];
        boolean packageGiven = false;
        for (int i = first == null ? 0 : 1; i < types.length; i++) {
            if (types[i] == String.class) {
                args[i] = packageGiven ? null : SHELL_PACKAGE;
                packageGiven = true;
            } else if (types[i] == int.class) {
                args[i] = 0;
            }
        }
        if (first != null) args[0] = first;
        return args;
    }

    String getText() throws Exception {
        Object s = service();
        Method m = find(s, "getPrimaryClip");
        ClipData clip = (ClipData) m.invoke(s, args(m, null));
        if (clip == null || clip.getItemCount() == 0) return "";
        CharSequence text = clip.getItemAt(0).getText();
        return text == null ? "" : text.toString();
    }

    void setText(String text) throws Exception {
        Object s = service();
        Method m = find(s, "setPrimaryClip");
        m.invoke(s, args(m, ClipData.newPlainText("glass", text)));
    }
}

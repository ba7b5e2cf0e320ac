package dev.devicebridge.glassagent;

import android.content.ClipData;
import android.os.Build;
import android.os.IBinder;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * The hidden IClipboard service (ServiceManager "clipboard"), through reflection, as the shell
 * package for user 0.
 *
 * <p>Why IClipboard and not the public ClipboardManager (scrcpy's choice since 2025): the public
 * manager needs a working Context from ActivityThread's system context and a running main looper,
 * which an app_process agent with best-effort start-up workarounds cannot promise on every OEM
 * build, and it hides the service's exceptions. Calling the binder interface directly keeps the
 * calling package and user explicit and lets every failure reach the host.
 *
 * <p>IClipboard's parameter lists changed between releases and OEMs change them too, so each
 * known signature is probed by its exact parameter list (never by name alone), the running
 * release's own first, with every parameter given a value: calling package "com.android.shell",
 * attribution tag null, user 0, device id 0 (Context.DEVICE_ID_DEFAULT), vivo's trailing boolean
 * userOperate true, Honor's trailing String null. The signatures are those scrcpy met (see
 * android/framework-fakes/src/base/java/android/content/IClipboard.java).
 */
final class ClipboardService {
    static final String SHELL_PACKAGE = "com.android.shell";
    private static final int USER_SYSTEM = 0;
    private static final int DEVICE_ID_DEFAULT = 0;

    /** One known parameter list of getPrimaryClip or setPrimaryClip (after the clip, for set). */
    private static final class Signature {
        final String label;
        final Class<?>[] types;
        final Object[] args;

        Signature(String label, Class<?>[] types, Object[] args) {
            this.label = label;
            this.types = types;
            this.args = args;
        }
    }

    private static final Class<?> S = String.class;
    private static final Class<?> I = int.class;
    private static final Class<?> Z = boolean.class;
    private static final String P = SHELL_PACKAGE;

    /** getPrimaryClip's known signatures: AOSP by release, then OEM variants. */
    static List<Signature> getSignatures() {
        List<Signature> list = new ArrayList<Signature>();
        list.add(new Signature("API 34+ (pkg, tag, user, device)", new Class<?>[] {S, S, I, I}, new Object[] {P, null, USER_SYSTEM, DEVICE_ID_DEFAULT}));
        list.add(new Signature("API 31-33 (pkg, tag, user)", new Class<?>[] {S, S, I}, new Object[] {P, null, USER_SYSTEM}));
        list.add(new Signature("API 29-30 (pkg, user)", new Class<?>[] {S, I}, new Object[] {P, USER_SYSTEM}));
        list.add(new Signature("API 23-28 (pkg)", new Class<?>[] {S}, new Object[] {P}));
        list.add(new Signature("vivo/iQOO (pkg, user, String)", new Class<?>[] {S, I, S}, new Object[] {P, USER_SYSTEM, null}));
        list.add(new Signature("vivo/iQOO (pkg, tag, user, device, userOperate)", new Class<?>[] {S, S, I, I, Z},
                new Object[] {P, null, USER_SYSTEM, DEVICE_ID_DEFAULT, true}));
        list.add(new Signature("vivo/iQOO (pkg, tag, String, String, user, device, userOperate)", new Class<?>[] {S, S, S, S, I, I, Z},
                new Object[] {P, null, null, null, USER_SYSTEM, DEVICE_ID_DEFAULT, true}));
        list.add(new Signature("Honor (pkg, tag, user, device, String)", new Class<?>[] {S, S, I, I, S},
                new Object[] {P, null, USER_SYSTEM, DEVICE_ID_DEFAULT, null}));
        return preferRelease(list);
    }

    /** setPrimaryClip's known signatures after the ClipData parameter. */
    static List<Signature> setSignatures() {
        List<Signature> list = new ArrayList<Signature>();
        list.add(new Signature("API 34+ (clip, pkg, tag, user, device)", new Class<?>[] {S, S, I, I}, new Object[] {P, null, USER_SYSTEM, DEVICE_ID_DEFAULT}));
        list.add(new Signature("API 31-33 (clip, pkg, tag, user)", new Class<?>[] {S, S, I}, new Object[] {P, null, USER_SYSTEM}));
        list.add(new Signature("API 29-30 (clip, pkg, user)", new Class<?>[] {S, I}, new Object[] {P, USER_SYSTEM}));
        list.add(new Signature("API 23-28 (clip, pkg)", new Class<?>[] {S}, new Object[] {P}));
        list.add(new Signature("vivo/iQOO (clip, pkg, tag, user, device, userOperate)", new Class<?>[] {S, S, I, I, Z},
                new Object[] {P, null, USER_SYSTEM, DEVICE_ID_DEFAULT, true}));
        return preferRelease(list);
    }

    /** The running release's AOSP signature first; the rest in table order. */
    private static List<Signature> preferRelease(List<Signature> list) {
        int sdk = Build.VERSION.SDK_INT;
        int own = sdk >= 34 ? 0 : sdk >= 31 ? 1 : sdk >= 29 ? 2 : 3;
        List<Signature> ordered = new ArrayList<Signature>(list.size());
        ordered.add(list.get(own));
        for (int i = 0; i < list.size(); i++) {
            if (i != own) ordered.add(list.get(i));
        }
        return ordered;
    }

    private Object service;
    private Method getMethod;
    private Signature getSignature;
    private Method setMethod;
    private Signature setSignature;

    private synchronized Object service() throws AndroidApi.Failure {
        if (service != null) return service;
        try {
            Class<?> sm = Class.forName("android.os.ServiceManager");
            IBinder binder = (IBinder) AndroidApi.invoke("ServiceManager.getService(\"clipboard\")", sm.getMethod("getService", String.class), null, "clipboard");
            if (binder == null) throw new AndroidApi.Failure("this device runs no clipboard service (ServiceManager has no \"clipboard\")", null);
            Class<?> stub = Class.forName("android.content.IClipboard$Stub");
            service = AndroidApi.invoke("IClipboard.Stub.asInterface", stub.getMethod("asInterface", IBinder.class), null, binder);
            return service;
        } catch (ClassNotFoundException e) {
            throw AndroidApi.failed("IClipboard", e);
        } catch (NoSuchMethodException e) {
            throw AndroidApi.failed("IClipboard", e);
        }
    }

    /** The first signature {@code target} has, by exact parameter list; an error listing what it has otherwise. */
    private static Method probe(Object target, String name, Class<?> first, List<Signature> signatures, Signature[] found)
            throws AndroidApi.Failure {
        for (Signature s : signatures) {
            Class<?>[] types = s.types;
            if (first != null) {
                types = new Class<?>[s.types.length + 1];
                types[0] = first;
                System.arraycopy(s.types, 0, types, 1, s.types.length);
            }
            try {
                Method m = target.getClass().getMethod(name, types);
                found[0] = s;
                return m;
            } catch (NoSuchMethodException e) {
                // the next known signature
            }
        }
        List<String> present = new ArrayList<String>();
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(name)) present.add(AndroidApi.signature(m));
        }
        throw new AndroidApi.Failure("IClipboard." + name + " has none of the known signatures on API " + Build.VERSION.SDK_INT
                + " (" + Build.MANUFACTURER + "); the service has " + (present.isEmpty() ? "no such method" : present.toString()), null);
    }

    /** getPrimaryClip as the shell: null when the service answered no clip. */
    synchronized ClipData getClip() throws AndroidApi.Failure {
        Object s = service();
        if (getMethod == null) {
            Signature[] found = new Signature[1];
            getMethod = probe(s, "getPrimaryClip", null, getSignatures(), found);
            getSignature = found[0];
        }
        return (ClipData) AndroidApi.invoke("IClipboard.getPrimaryClip", getMethod, s, getSignature.args.clone());
    }

    synchronized void setClip(ClipData clip) throws AndroidApi.Failure {
        Object s = service();
        if (setMethod == null) {
            Signature[] found = new Signature[1];
            setMethod = probe(s, "setPrimaryClip", ClipData.class, setSignatures(), found);
            setSignature = found[0];
        }
        Object[] args = new Object[setSignature.args.length + 1];
        args[0] = clip;
        System.arraycopy(setSignature.args, 0, args, 1, setSignature.args.length);
        AndroidApi.invoke("IClipboard.setPrimaryClip", setMethod, s, args);
    }

    /**
     * The clip's text ("" for no clip, or a clip whose first item has no or empty text).
     *
     * <p>ClipboardService.getPrimaryClip (AOSP, every release from 6 to 15) returns null both when
     * there is no clip and when it refuses the read (since Android 8 while the device is locked,
     * isDeviceLocked; the READ_CLIPBOARD app op or a device maker's clipboard permission), and
     * hasPrimaryClip sits behind the same checks. A locked device is the refusal a farm meets (the
     * shell may read the clipboard otherwise): checked through IWindowManager.isKeyguardLocked, it
     * is an error naming the lock, never "". Unlocked, a null clip is an empty clipboard (a refusal
     * there cannot be told apart and reads empty too).
     */
    String getText() throws AndroidApi.Failure {
        ClipData clip = getClip();
        if (clip == null) {
            if (Build.VERSION.SDK_INT >= 26 && keyguardLocked()) {
                throw new AndroidApi.Failure("clipboard could not be read: the device is locked"
                        + " (Android 8 and later hide the clipboard until it is unlocked)", null);
            }
            return "";
        }
        if (clip.getItemCount() == 0) return "";
        CharSequence text = clip.getItemAt(0).getText();
        return text == null ? "" : text.toString();
    }

    void setText(String text) throws AndroidApi.Failure {
        setClip(ClipData.newPlainText("glass", text));
    }

    /** IWindowManager.isKeyguardLocked(); false when that cannot be asked. */
    private static boolean keyguardLocked() {
        try {
            Class<?> sm = Class.forName("android.os.ServiceManager");
            Object binder = sm.getMethod("getService", String.class).invoke(null, "window");
            if (binder == null) return false;
            Object wm = Class.forName("android.view.IWindowManager$Stub").getMethod("asInterface", IBinder.class).invoke(null, binder);
            Object locked = wm.getClass().getMethod("isKeyguardLocked").invoke(wm);
            return Boolean.TRUE.equals(locked);
        } catch (Exception e) {
            return false;
        }
    }
}

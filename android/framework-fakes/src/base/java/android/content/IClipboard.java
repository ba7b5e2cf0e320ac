/*
 * Fake of the hidden AIDL interface frameworks/base/core/java/android/content/IClipboard.aidl and
 * the service behind it, frameworks/base/services/core/java/com/android/server/clipboard/
 * ClipboardService.java, as the shell uid sees them. Stub.asInterface answers a proxy that has
 * exactly one getPrimaryClip and one setPrimaryClip, with the parameter list of the profile's
 * release:
 *
 *   API 23-28  getPrimaryClip(String pkg)                               android-9.0.0_r1
 *              setPrimaryClip(ClipData, String pkg)
 *   API 29-30  getPrimaryClip(String pkg, int userId)                   android-10.0.0_r1
 *              setPrimaryClip(ClipData, String pkg, int userId)
 *   API 31-33  getPrimaryClip(String pkg, String attributionTag, int userId)      android-12.0.0_r1
 *              setPrimaryClip(ClipData, String pkg, String attributionTag, int userId)
 *   API 34+    ... , int userId, int deviceId)                          android-14.0.0_r1
 *
 * and the OEM variants scrcpy met on devices (server/.../wrappers/ClipboardManager.java before it
 * moved to the public ClipboardManager):
 *
 *   vivo/iQOO, API < 34  getPrimaryClip(String pkg, int userId, String)            scrcpy #4492
 *   vivo/iQOO, API 34+   getPrimaryClip(String, String, int, int, boolean userOperate),
 *                        setPrimaryClip(ClipData, String, String, int, int, boolean)  #4589, #4703
 *   Honor, API 34+       getPrimaryClip(String, String, int, int, String)           #4822, #5073
 *
 * Service rules (ClipboardService @ android-14.0.0_r1): the calling package must belong to the
 * calling uid (AppOpsManager.checkPackage, a SecurityException otherwise); getPrimaryClip returns
 * null when clipboard access is not allowed (the app op) and, since Android 8, while the device is
 * locked (isDeviceLocked); it also returns null when there is no clip. So a null answer cannot, by
 * itself, tell an empty clipboard from a refused read.
 */
package android.content;

import android.os.IBinder;
import android.os.IInterface;
import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.Profile;

public interface IClipboard extends IInterface {
    abstract class Stub implements IClipboard {
        public static IClipboard asInterface(IBinder binder) {
            if (binder == null) return null;
            Profile p = Profile.current();
            if (p.oem == Profile.Oem.VIVO) return p.atLeast(34) ? new Vivo34() : new Vivo31();
            if (p.oem == Profile.Oem.HONOR && p.atLeast(34)) return new Honor34();
            if (p.atLeast(34)) return new Api34();
            if (p.atLeast(31)) return new Api31();
            if (p.atLeast(29)) return new Api29();
            return new Api23();
        }

        @Override
        public IBinder asBinder() {
            return new android.os.Binder("android.content.IClipboard");
        }

        static ClipData get(String method, Object[] args, String pkg, int userId) {
            FakeDevice.Clipboard.record(method, args);
            return FakeDevice.Clipboard.get(pkg, userId);
        }

        static void set(Object[] args, ClipData clip, String pkg, int userId) {
            FakeDevice.Clipboard.record("setPrimaryClip", args);
            FakeDevice.Clipboard.set(clip, pkg, userId);
        }
    }

    final class Api23 extends Stub {
        public ClipData getPrimaryClip(String pkg) {
            return get("getPrimaryClip", new Object[] {pkg}, pkg, 0);
        }

        public void setPrimaryClip(ClipData clip, String pkg) {
            set(new Object[] {clip, pkg}, clip, pkg, 0);
        }
    }

    final class Api29 extends Stub {
        public ClipData getPrimaryClip(String pkg, int userId) {
            return get("getPrimaryClip", new Object[] {pkg, userId}, pkg, userId);
        }

        public void setPrimaryClip(ClipData clip, String pkg, int userId) {
            set(new Object[] {clip, pkg, userId}, clip, pkg, userId);
        }
    }

    final class Api31 extends Stub {
        public ClipData getPrimaryClip(String pkg, String attributionTag, int userId) {
            return get("getPrimaryClip", new Object[] {pkg, attributionTag, userId}, pkg, userId);
        }

        public void setPrimaryClip(ClipData clip, String pkg, String attributionTag, int userId) {
            set(new Object[] {clip, pkg, attributionTag, userId}, clip, pkg, userId);
        }
    }

    final class Api34 extends Stub {
        public ClipData getPrimaryClip(String pkg, String attributionTag, int userId, int deviceId) {
            return get("getPrimaryClip", new Object[] {pkg, attributionTag, userId, deviceId}, pkg, userId);
        }

        public void setPrimaryClip(ClipData clip, String pkg, String attributionTag, int userId, int deviceId) {
            set(new Object[] {clip, pkg, attributionTag, userId, deviceId}, clip, pkg, userId);
        }
    }

    final class Vivo31 extends Stub {
        public ClipData getPrimaryClip(String pkg, int userId, String extra) {
            return get("getPrimaryClip", new Object[] {pkg, userId, extra}, pkg, userId);
        }

        public void setPrimaryClip(ClipData clip, String pkg, String attributionTag, int userId) {
            set(new Object[] {clip, pkg, attributionTag, userId}, clip, pkg, userId);
        }
    }

    final class Vivo34 extends Stub {
        public ClipData getPrimaryClip(String pkg, String attributionTag, int userId, int deviceId, boolean userOperate) {
            return get("getPrimaryClip", new Object[] {pkg, attributionTag, userId, deviceId, userOperate}, pkg, userId);
        }

        public void setPrimaryClip(ClipData clip, String pkg, String attributionTag, int userId, int deviceId, boolean userOperate) {
            set(new Object[] {clip, pkg, attributionTag, userId, deviceId, userOperate}, clip, pkg, userId);
        }
    }

    final class Honor34 extends Stub {
        public ClipData getPrimaryClip(String pkg, String attributionTag, int userId, int deviceId, String extra) {
            return get("getPrimaryClip", new Object[] {pkg, attributionTag, userId, deviceId, extra}, pkg, userId);
        }

        public void setPrimaryClip(ClipData clip, String pkg, String attributionTag, int userId, int deviceId) {
            set(new Object[] {clip, pkg, attributionTag, userId, deviceId}, clip, pkg, userId);
        }
    }
}

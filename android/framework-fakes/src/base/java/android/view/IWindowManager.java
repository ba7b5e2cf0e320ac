/*
 * Fake of the hidden AIDL frameworks/base/core/java/android/view/IWindowManager.aidl
 * @ android-14.0.0_r1 (ServiceManager "window"): isKeyguardLocked() only, answered from
 * FakeDevice.Screen.
 */
package android.view;

import android.os.IBinder;
import android.os.IInterface;
import dev.devicebridge.fakes.FakeDevice;

public interface IWindowManager extends IInterface {
    boolean isKeyguardLocked();

    abstract class Stub implements IWindowManager {
        public static IWindowManager asInterface(IBinder binder) {
            if (binder == null) return null;
            return new Proxy();
        }
    }

    final class Proxy extends Stub {
        @Override
        public boolean isKeyguardLocked() {
            return FakeDevice.Screen.locked();
        }

        @Override
        public IBinder asBinder() {
            return new android.os.Binder("android.view.IWindowManager");
        }
    }
}

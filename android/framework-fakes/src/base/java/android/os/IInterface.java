/* Fake of frameworks/base/core/java/android/os/IInterface.java @ android-14.0.0_r1. */
package android.os;

public interface IInterface {
    IBinder asBinder();
}

/* Fake of frameworks/base/core/java/android/os/IBinder.java @ android-14.0.0_r1 (the descriptor only). */
package android.os;

public interface IBinder {
    String getInterfaceDescriptor() throws RemoteException;
}

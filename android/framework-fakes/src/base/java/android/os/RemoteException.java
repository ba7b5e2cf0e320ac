/* Fake of frameworks/base/core/java/android/os/RemoteException.java @ android-14.0.0_r1. */
package android.os;

public class RemoteException extends Exception {
    private static final long serialVersionUID = 1L;

    public RemoteException() {}

    public RemoteException(String message) {
        super(message);
    }
}

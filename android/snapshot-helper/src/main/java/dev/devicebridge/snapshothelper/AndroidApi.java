package dev.devicebridge.snapshothelper;

import android.os.Build;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Framework failures as the host should read them (the glass agent's rule, fitted to the snapshot
 * contract): the message names the Android API that failed and the device's API level
 * ("UiAutomation.injectInputEvent failed on API 34: SecurityException: ..."), and the exception
 * keeps the framework's class, so the result's {@code errorType} stays e.g.
 * {@code java.lang.SecurityException}.
 */
final class AndroidApi {
    private AndroidApi() {}

    /** A reflective framework call; failures as {@link #failed}. */
    static Object invoke(String api, Method method, Object target, Object... args) {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw failed(api, e.getTargetException());
        } catch (IllegalAccessException e) {
            throw failed(api, e);
        }
    }

    /** "API failed on API N: SimpleName: message", as an exception of the cause's class where it can be. */
    static RuntimeException failed(String api, Throwable cause) {
        Throwable t = unwrap(cause);
        return withMessage(t, api + " failed on API " + Build.VERSION.SDK_INT + ": " + describe(t));
    }

    /** An exception of {@code t}'s class (when it is a RuntimeException that can be built so) saying {@code message}, caused by t. */
    static RuntimeException withMessage(Throwable t, String message) {
        if (t instanceof RuntimeException) {
            try {
                Constructor<? extends Throwable> c = t.getClass().getConstructor(String.class);
                RuntimeException same = (RuntimeException) c.newInstance(message);
                same.initCause(t);
                return same;
            } catch (Exception notConstructible) {
                // fall through
            } catch (LinkageError notConstructible) {
                // fall through
            }
        }
        return new IllegalStateException(message, t);
    }

    /** An API that answered in a way that is a failure (false, null), without an exception. */
    static IllegalStateException refused(String api, String what) {
        return new IllegalStateException(api + " failed on API " + Build.VERSION.SDK_INT + ": " + what);
    }

    private static String describe(Throwable t) {
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    private static Throwable unwrap(Throwable e) {
        Throwable t = e;
        for (int depth = 0; depth < 10 && t instanceof InvocationTargetException; depth++) {
            Throwable inner = ((InvocationTargetException) t).getTargetException();
            if (inner == null) break;
            t = inner;
        }
        return t;
    }
}

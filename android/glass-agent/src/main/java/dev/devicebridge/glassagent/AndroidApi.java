package dev.devicebridge.glassagent;

import android.os.Build;
import dev.devicebridge.glass.common.JsonLineProtocol;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Reflective calls into the framework that fail with the exception the framework threw (never an
 * InvocationTargetException) and a message naming the Android API and the device's API level:
 * "InputManagerGlobal.injectInputEvent failed on API 34: SecurityException: ...".
 */
final class AndroidApi {
    private AndroidApi() {}

    /** A framework call that failed; its message is what the host is told. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    static Object invoke(String api, Method method, Object target, Object... args) throws Failure {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw failed(api, e.getTargetException());
        } catch (IllegalAccessException e) {
            throw failed(api, e);
        } catch (IllegalArgumentException e) {
            throw failed(api, e);
        }
    }

    static Failure failed(String api, Throwable cause) {
        return new Failure(api + " failed on API " + Build.VERSION.SDK_INT + ": " + JsonLineProtocol.describe(cause), JsonLineProtocol.unwrap(cause));
    }

    static String signature(Method m) {
        StringBuilder b = new StringBuilder(m.getName()).append('(');
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (i > 0) b.append(", ");
            b.append(types[i].getSimpleName());
        }
        return b.append(')').toString();
    }
}

package dev.devicebridge.snapshothelper.core;

/**
 * A failure the helper reports as {@code ok=false}, {@code errorType} and {@code message}. The
 * errorType is the Java class name of the cause, as the bridge expects it (for example
 * {@code java.lang.IllegalArgumentException}).
 */
public final class HelperFailure extends Exception {
    private static final long serialVersionUID = 1L;
    private final String errorType;

    public HelperFailure(String errorType, String message) {
        super(message);
        this.errorType = errorType;
    }

    public String errorType() {
        return errorType;
    }

    /** The errorType/message pair of any throwable: a HelperFailure's own, else its class name. */
    public static HelperFailure of(Throwable error) {
        if (error instanceof HelperFailure) return (HelperFailure) error;
        String message = error.getMessage();
        return new HelperFailure(error.getClass().getName(), message == null ? error.toString() : message);
    }
}

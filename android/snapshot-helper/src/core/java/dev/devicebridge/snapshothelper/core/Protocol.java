package dev.devicebridge.snapshothelper.core;

/** Literals of the android-snapshot-helper-v1 output contract (seed 000). */
public final class Protocol {
    public static final String PROTOCOL = "android-snapshot-helper-v1";
    public static final String HELPER_API_VERSION = "2";
    public static final String OUTPUT_FORMAT = "uiautomator-xml";
    /** Raw XML bytes per chunk status record (before base64). */
    public static final int CHUNK_BYTES = 2 * 1024;
    public static final int RESULT_CODE_OK = 0;
    public static final int RESULT_CODE_ERROR = 1;
    public static final int STATUS_CODE_CHUNK = 1;
    public static final int STATUS_CODE_SESSION_READY = 2;
    public static final String CAPTURE_INTERACTIVE_WINDOWS = "interactive-windows";
    public static final String CAPTURE_ACTIVE_WINDOW = "active-window";

    private Protocol() {}

    /** agentDeviceProtocol, helperApiVersion, outputFormat: in every status, result and response. */
    public static Fields protocolFields() {
        return new Fields()
                .put("agentDeviceProtocol", PROTOCOL)
                .put("helperApiVersion", HELPER_API_VERSION)
                .put("outputFormat", OUTPUT_FORMAT);
    }

    /** ok=false, errorType, message. */
    public static Fields errorFields(Throwable error) {
        HelperFailure failure = HelperFailure.of(error);
        return new Fields()
                .put("ok", "false")
                .put("errorType", failure.errorType())
                .put("message", failure.getMessage());
    }
}

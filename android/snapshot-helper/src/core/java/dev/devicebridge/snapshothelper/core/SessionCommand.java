package dev.devicebridge.snapshothelper.core;

/**
 * One persistent-session command line: {@code snapshot|viewport|gesture|quit <requestId> [payload]},
 * split like {@code line.trim().split("\\s+", 3)}.
 */
public final class SessionCommand {
    public final String action;
    public final String requestId;
    public final String payload;

    private SessionCommand(String action, String requestId, String payload) {
        this.action = action;
        this.requestId = requestId;
        this.payload = payload;
    }

    public static SessionCommand parse(String line) {
        String trimmed = line.trim();
        if (trimmed.isEmpty()) return new SessionCommand("", "", "");
        String[] parts = trimmed.split("\\s+", 3);
        return new SessionCommand(parts[0], parts.length > 1 ? parts[1] : "", parts.length > 2 ? parts[2] : "");
    }
}

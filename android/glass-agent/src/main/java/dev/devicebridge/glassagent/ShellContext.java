package dev.devicebridge.glassagent;

import android.content.Context;
import android.content.ContextWrapper;

/**
 * A Context that reports the shell's package, com.android.shell, around ActivityThread's system
 * context: what framework code running in the agent's process (as uid 2000) sees as its package,
 * so that package/uid checks in system services match.
 */
final class ShellContext extends ContextWrapper {
    static final String PACKAGE_NAME = "com.android.shell";

    ShellContext(Context base) {
        super(base);
    }

    @Override
    public String getPackageName() {
        return PACKAGE_NAME;
    }

    /** Hidden on API 23 (so no @Override): the package app ops are noted against. */
    public String getOpPackageName() {
        return PACKAGE_NAME;
    }
}

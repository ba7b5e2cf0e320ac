package dev.devicebridge.glassagent.core;

/**
 * What the encoder was set up for: the display's logical size (the coordinates input uses, already
 * swapped by the rotation) and its rotation (0-3, Surface.ROTATION_*). The restart policy: any
 * difference restarts the encoder — a size change (rotation by 90°, a resolution or density change,
 * a fold) needs a new picture size, and a rotation by 180° keeps the size but a mirror set up for
 * the old rotation shows the picture upside down on some releases (scrcpy restarts on every
 * rotation for the same reason).
 */
public final class DisplayState {
    public final int width;
    public final int height;
    public final int rotation;

    public DisplayState(int width, int height, int rotation) {
        this.width = width;
        this.height = height;
        this.rotation = rotation;
    }

    /** Whether an encoder set up for {@code current} must restart now that the display is {@code seen}. */
    public static boolean needsRestart(DisplayState current, DisplayState seen) {
        if (seen == null) return false; // unreadable for a moment: keep streaming what we have
        return current == null || !current.equals(seen);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DisplayState)) return false;
        DisplayState d = (DisplayState) o;
        return d.width == width && d.height == height && d.rotation == rotation;
    }

    @Override
    public int hashCode() {
        return (width * 31 + height) * 31 + rotation;
    }

    @Override
    public String toString() {
        return width + "x" + height + " rotation " + rotation;
    }
}

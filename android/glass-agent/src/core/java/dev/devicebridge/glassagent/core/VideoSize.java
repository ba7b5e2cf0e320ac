package dev.devicebridge.glassagent.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The encoded picture's size for a display: the display's size scaled so that its long side is at
 * most the max size, the aspect ratio kept, each side a multiple of the alignment (8 by default:
 * H.264 encoders work in 16×16 macroblocks and most accept multiples of 8; some insist on 16).
 * The long side is rounded down (never above the max size), the short side to the nearest
 * multiple (the aspect ratio closest to the display's), at least one alignment step.
 */
public final class VideoSize {
    public static final int DEFAULT_ALIGNMENT = 8;
    /** Long sides tried, largest first, when an encoder refuses the size asked for (as scrcpy does). */
    static final int[] FALLBACK_MAX_SIZES = {1920, 1600, 1280, 1024, 800};

    public final int width;
    public final int height;

    public VideoSize(int width, int height) {
        this.width = width;
        this.height = height;
    }

    public static VideoSize compute(int displayWidth, int displayHeight, int maxSize, int alignment) {
        if (displayWidth < 1 || displayHeight < 1) throw new IllegalArgumentException("display size " + displayWidth + "x" + displayHeight + " is empty");
        if (alignment < 1 || (alignment & (alignment - 1)) != 0) throw new IllegalArgumentException("alignment " + alignment + " is not a power of two");
        if (maxSize < 0) throw new IllegalArgumentException("max size " + maxSize + " is negative");
        boolean portrait = displayHeight > displayWidth;
        int longSide = portrait ? displayHeight : displayWidth;
        int shortSide = portrait ? displayWidth : displayHeight;
        int targetLong = maxSize == 0 || maxSize >= longSide ? longSide : maxSize;
        int alignedLong = Math.max(alignment, targetLong / alignment * alignment);
        double exactShort = (double) shortSide * alignedLong / longSide;
        int alignedShort = Math.max(alignment, (int) Math.round(exactShort / alignment) * alignment);
        return portrait ? new VideoSize(alignedShort, alignedLong) : new VideoSize(alignedLong, alignedShort);
    }

    /**
     * The sizes to try in turn until an encoder accepts one: the size for {@code maxSize} aligned to
     * 8, the same aligned to 16 (encoders that refuse other sizes), then smaller long sides aligned
     * to 16. No size twice.
     */
    public static List<VideoSize> attempts(int displayWidth, int displayHeight, int maxSize) {
        List<VideoSize> list = new ArrayList<VideoSize>();
        VideoSize first = compute(displayWidth, displayHeight, maxSize, DEFAULT_ALIGNMENT);
        list.add(first);
        addNew(list, compute(displayWidth, displayHeight, maxSize, 16));
        int longSide = Math.max(first.width, first.height);
        for (int m : FALLBACK_MAX_SIZES) {
            if (m < longSide) addNew(list, compute(displayWidth, displayHeight, m, 16));
        }
        return list;
    }

    private static void addNew(List<VideoSize> list, VideoSize s) {
        for (VideoSize have : list) {
            if (have.equals(s)) return;
        }
        list.add(s);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VideoSize && ((VideoSize) o).width == width && ((VideoSize) o).height == height;
    }

    @Override
    public int hashCode() {
        return width * 31 + height;
    }

    @Override
    public String toString() {
        return width + "x" + height;
    }
}

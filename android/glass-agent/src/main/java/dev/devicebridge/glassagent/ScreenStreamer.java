package dev.devicebridge.glassagent;

import android.media.MediaCodec;
import android.media.MediaFormat;
import android.os.Build;
import android.view.Surface;
import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glassagent.core.DisplayState;
import dev.devicebridge.glassagent.core.EncoderSettings;
import dev.devicebridge.glassagent.core.ScreenFraming;
import dev.devicebridge.glassagent.core.ScreenOptions;
import dev.devicebridge.glassagent.core.VideoSize;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Streams display 0 to one client as H.264 in the device stream framing (docs/live-screen.md), as
 * scrcpy's SurfaceEncoder does: a MediaCodec surface encoder ({@link EncoderSettings}), its input
 * surface fed by a {@link DisplayMirror}, output buffers written as packets — BUFFER_FLAG_CODEC_CONFIG
 * as CONFIG, BUFFER_FLAG_KEY_FRAME as KEY_FRAME.
 *
 * <p>A watcher reads the display every {@code pollMs} (DisplayManagerGlobal.getDisplayInfo; display
 * listeners stay silent on some Android 14 and 15 builds, scrcpy found, and a poll works on every
 * release); on a change of size or rotation ({@link DisplayState#needsRestart}) the encoder ends
 * its stream and restarts at the new size, and the client gets a SIZE packet and the new CONFIG.
 * The client's end of the connection is read only to learn that it left; the stream ends then.
 */
final class ScreenStreamer {
    /** Encoding is not possible on this device; the message says why. */
    static final class CannotEncode extends Exception {
        private static final long serialVersionUID = 1L;

        CannotEncode(String message, Throwable cause) {
            super(message, cause);
        }
    }

    static final long DEFAULT_POLL_MS = 250;
    /** How long one dequeueOutputBuffer waits before the loop looks at the restart/stop flags again. */
    static final long DEQUEUE_TIMEOUT_US = 100000;

    private final ScreenOptions options;
    private final DisplayReader display = new DisplayReader();
    private final long pollMs;
    private final Object lock = new Object();
    private boolean restart;
    private boolean stopped;
    private MediaCodec running;
    private String lastMirrorPath;

    ScreenStreamer(ScreenOptions options, long pollMs) {
        this.options = options;
        this.pollMs = pollMs;
    }

    /** What was used (for the agent's log line): "c2.android.avc.encoder 720x1280 via DisplayManager.createVirtualDisplay". */
    String lastMirrorPath() {
        synchronized (lock) {
            return lastMirrorPath;
        }
    }

    /**
     * Checks, before any client connects, that this device can encode: the display is readable, an
     * H.264 encoder exists and accepts one of the sizes to try, and a mirror path exists. Returns a
     * description of what will be used.
     */
    String preflight() throws CannotEncode {
        DisplayReader.Reading now = readDisplay();
        if (now == null) throw new CannotEncode("the display manager describes no display 0", null);
        String paths = DisplayMirror.available();
        if (paths.isEmpty()) {
            throw new CannotEncode("neither DisplayManager.createVirtualDisplay nor SurfaceControl.createDisplay exists on API " + Build.VERSION.SDK_INT, null);
        }
        MediaCodec codec = createEncoder();
        try {
            Configured c = configure(codec, now.state);
            c.surface.release();
            codec.reset();
            return codec.getName() + " " + c.size + " of display " + now.state.width + "x" + now.state.height + ", mirror by " + paths;
        } finally {
            codec.release();
        }
    }

    /** Streams until the client leaves (returns) or encoding fails (throws CannotEncode). */
    void stream(InputStream fromClient, OutputStream toClient) throws CannotEncode {
        ScreenFraming.Writer writer = new ScreenFraming.Writer(toClient);
        Thread clientWatch = watchClient(fromClient);
        Thread displayWatch = null;
        MediaCodec codec = createEncoder();
        try {
            boolean first = true;
            DisplayState current = null;
            while (!isStopped()) {
                synchronized (lock) {
                    restart = false;
                }
                DisplayReader.Reading now = readDisplay();
                if (now == null) throw new CannotEncode("the display manager describes no display 0", null);
                current = now.state;
                if (displayWatch == null) displayWatch = watchDisplay(current);
                Configured c = configure(codec, current);
                DisplayMirror mirror = null;
                boolean started = false;
                try {
                    mirror = openMirror(c, now);
                    try {
                        codec.start();
                    } catch (RuntimeException e) {
                        throw new CannotEncode("MediaCodec.start failed for " + c.size + " on API " + Build.VERSION.SDK_INT + ": " + JsonLineProtocol.describe(e), e);
                    }
                    started = true;
                    synchronized (lock) {
                        running = codec;
                        lastMirrorPath = mirror.path();
                    }
                    if (first) {
                        writer.session(c.size.width, c.size.height, current.width, current.height);
                        first = false;
                    } else {
                        writer.size(c.size.width, c.size.height, current.width, current.height);
                    }
                    drain(codec, writer);
                } catch (IOException clientLeft) {
                    stop();
                } finally {
                    synchronized (lock) {
                        running = null;
                    }
                    if (mirror != null) mirror.close();
                    if (started) {
                        try {
                            codec.stop();
                        } catch (IllegalStateException ignored) {
                            // the reset below puts it back to Uninitialized anyway
                        }
                    }
                    codec.reset();
                    c.surface.release();
                }
            }
        } finally {
            stop();
            codec.release();
            if (displayWatch != null) displayWatch.interrupt();
            clientWatch.interrupt();
        }
    }

    /** Writes the encoder's output until its end of stream, a restart or the client leaving. */
    private void drain(MediaCodec codec, ScreenFraming.Writer writer) throws IOException, CannotEncode {
        MediaCodec.BufferInfo info = new MediaCodec.BufferInfo();
        byte[] copy = new byte[0];
        while (true) {
            synchronized (lock) {
                if (stopped || restart) return;
            }
            int index;
            try {
                index = codec.dequeueOutputBuffer(info, DEQUEUE_TIMEOUT_US);
            } catch (IllegalStateException e) {
                throw new CannotEncode("MediaCodec.dequeueOutputBuffer failed: " + JsonLineProtocol.describe(e), e);
            }
            if (index < 0) continue; // INFO_TRY_AGAIN_LATER, INFO_OUTPUT_FORMAT_CHANGED, INFO_OUTPUT_BUFFERS_CHANGED
            try {
                boolean eos = (info.flags & MediaCodec.BUFFER_FLAG_END_OF_STREAM) != 0;
                if (info.size > 0) {
                    ByteBuffer buffer = codec.getOutputBuffer(index);
                    buffer.limit(info.offset + info.size);
                    buffer.position(info.offset);
                    if (copy.length < info.size) copy = new byte[info.size];
                    buffer.get(copy, 0, info.size);
                    boolean config = (info.flags & MediaCodec.BUFFER_FLAG_CODEC_CONFIG) != 0;
                    boolean key = !config && (info.flags & MediaCodec.BUFFER_FLAG_KEY_FRAME) != 0;
                    writer.packet(config, key, info.presentationTimeUs, copy, 0, info.size);
                }
                if (eos) return;
            } finally {
                codec.releaseOutputBuffer(index, false);
            }
        }
    }

    /** A configured encoder and its input surface. */
    private static final class Configured {
        final VideoSize size;
        final Surface surface;

        Configured(VideoSize size, Surface surface) {
            this.size = size;
            this.surface = surface;
        }
    }

    /** Configures {@code codec} at the first size it accepts ({@link VideoSize#attempts}). */
    private Configured configure(MediaCodec codec, DisplayState state) throws CannotEncode {
        List<VideoSize> attempts = VideoSize.attempts(state.width, state.height, options.maxSize);
        StringBuilder refusals = new StringBuilder();
        for (VideoSize size : attempts) {
            MediaFormat format = new MediaFormat();
            for (EncoderSettings.Entry e : EncoderSettings.entries(Build.VERSION.SDK_INT, size, options)) {
                if (e.value instanceof Integer) format.setInteger(e.key, (Integer) e.value);
                else if (e.value instanceof Long) format.setLong(e.key, (Long) e.value);
                else if (e.value instanceof Float) format.setFloat(e.key, (Float) e.value);
                else format.setString(e.key, (String) e.value);
            }
            try {
                codec.configure(format, null, null, MediaCodec.CONFIGURE_FLAG_ENCODE);
                return new Configured(size, codec.createInputSurface());
            } catch (RuntimeException e) {
                // IllegalArgumentException, IllegalStateException, MediaCodec.CodecException (API 21)
                if (refusals.length() > 0) refusals.append("; ");
                refusals.append(size).append(": ").append(JsonLineProtocol.describe(e));
                codec.reset();
            }
        }
        throw new CannotEncode("the H.264 encoder " + codec.getName() + " refused every size tried for the " + state.width + "x" + state.height
                + " display (" + refusals + ")", null);
    }

    private static MediaCodec createEncoder() throws CannotEncode {
        try {
            return MediaCodec.createEncoderByType(EncoderSettings.MIME_AVC);
        } catch (IOException e) {
            throw new CannotEncode("no H.264 encoder on API " + Build.VERSION.SDK_INT + ": " + JsonLineProtocol.describe(e), e);
        } catch (RuntimeException e) {
            throw new CannotEncode("no H.264 encoder on API " + Build.VERSION.SDK_INT + ": " + JsonLineProtocol.describe(e), e);
        }
    }

    private DisplayReader.Reading readDisplay() throws CannotEncode {
        try {
            return display.read();
        } catch (AndroidApi.Failure f) {
            throw new CannotEncode(f.getMessage(), f.getCause());
        }
    }

    private static DisplayMirror openMirror(Configured c, DisplayReader.Reading now) throws CannotEncode {
        try {
            return DisplayMirror.open(c.surface, c.size.width, c.size.height, now.state.width, now.state.height, now.layerStack);
        } catch (AndroidApi.Failure f) {
            throw new CannotEncode(f.getMessage(), f.getCause());
        }
    }

    private boolean isStopped() {
        synchronized (lock) {
            return stopped;
        }
    }

    /** Ends the stream: the loop returns after the current packet. */
    void stop() {
        synchronized (lock) {
            stopped = true;
        }
        interruptEncoder();
    }

    /** The display changed: the running encoder ends its stream and the loop restarts it. */
    void requestRestart() {
        synchronized (lock) {
            restart = true;
        }
        interruptEncoder();
    }

    private void interruptEncoder() {
        synchronized (lock) {
            if (running == null) return;
            try {
                running.signalEndOfInputStream();
            } catch (IllegalStateException ignored) {
                // not executing any more: the loop sees the flags
            }
        }
    }

    /** Reads the client's side until it closes (the client left), then stops the stream. */
    private Thread watchClient(final InputStream in) {
        Thread t = new Thread(new Runnable() {
            @Override
            public void run() {
                byte[] ignored = new byte[256];
                try {
                    while (in.read(ignored) >= 0) {
                        // the client sends nothing the agent reads
                    }
                } catch (IOException gone) {
                    // the same as an end of stream
                }
                stop();
            }
        }, "screen-client");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Polls the display; a change of size or rotation restarts the encoder. */
    private Thread watchDisplay(final DisplayState initial) {
        Thread t = new Thread(new Runnable() {
            @Override
            public void run() {
                DisplayState seen = initial;
                while (!isStopped()) {
                    try {
                        Thread.sleep(pollMs);
                    } catch (InterruptedException e) {
                        return;
                    }
                    DisplayReader.Reading now;
                    try {
                        now = display.read();
                    } catch (AndroidApi.Failure f) {
                        System.err.println("screen: reading the display failed: " + f.getMessage());
                        continue;
                    }
                    DisplayState state = now == null ? null : now.state;
                    if (DisplayState.needsRestart(seen, state)) {
                        seen = state;
                        requestRestart();
                    }
                }
            }
        }, "screen-display");
        t.setDaemon(true);
        t.start();
        return t;
    }
}

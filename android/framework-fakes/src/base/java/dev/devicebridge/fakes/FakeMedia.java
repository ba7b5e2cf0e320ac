package dev.devicebridge.fakes;

import android.media.MediaCodec;
import android.media.MediaFormat;
import android.view.Surface;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The fake device's H.264 encoders (behind the android.media.MediaCodec fake) and the encoder
 * quirks of real devices tests can switch on: no encoder at all, sizes refused unless a multiple of
 * 16, a failing start, repeat-previous-frame ignored.
 *
 * <p>An executing encoder's output is a queue: INFO_OUTPUT_FORMAT_CHANGED and the CODEC_CONFIG
 * buffer at start (SPS/PPS naming the size: {@code 00 00 00 01 67 42 c0 1f W W H H} and
 * {@code 00 00 00 01 68 ce 3c 80}), a frame for every picture drawn into its input surface
 * ({@code 00 00 00 01 65 n} for the first after start, a key frame; {@code 00 00 00 01 41 n} after),
 * the END_OF_STREAM buffer after signalEndOfInputStream. Times advance 33 333 µs a frame.
 */
public final class FakeMedia {
    private FakeMedia() {}

    public static final String ENCODER_NAME = "c2.fake.avc.encoder";

    static {
        FakeDevice.onReset(new Runnable() {
            @Override
            public void run() {
                reset();
            }
        });
    }

    private static boolean noEncoder;
    private static int requiredAlignment;
    private static RuntimeException startFailure;
    private static boolean ignoresRepeat;
    private static long clockUs;
    private static final List<Encoder> ENCODERS = new ArrayList<Encoder>();

    static synchronized void reset() {
        noEncoder = false;
        requiredAlignment = 0;
        startFailure = null;
        ignoresRepeat = false;
        clockUs = 0;
        ENCODERS.clear();
    }

    /** createEncoderByType("video/avc") throws IOException (a device without an H.264 encoder). */
    public static synchronized void setNoEncoder(boolean value) {
        noEncoder = value;
    }

    /** configure refuses a width or height that is not a multiple of {@code alignment} (0: any size). */
    public static synchronized void refuseSizesNotMultipleOf(int alignment) {
        requiredAlignment = alignment;
    }

    /** start() throws {@code e}. */
    public static synchronized void failStart(RuntimeException e) {
        startFailure = e;
    }

    /** The encoder ignores repeat-previous-frame-after (no frame while the screen is idle). */
    public static synchronized void setIgnoresRepeat(boolean value) {
        ignoresRepeat = value;
    }

    /** Every encoder created so far. */
    public static synchronized List<Encoder> encoders() {
        return new ArrayList<Encoder>(ENCODERS);
    }

    /**
     * {@code ms} milliseconds pass with nothing new drawn: an executing encoder configured with
     * repeat-previous-frame-after R µs that has had a picture emits ms·1000/R repeats of it.
     */
    public static void idle(long ms) {
        for (Encoder e : encoders()) e.idle(ms);
    }

    public static Encoder create(String type) throws IOException {
        synchronized (FakeMedia.class) {
            if (noEncoder || !MediaFormat.MIMETYPE_VIDEO_AVC.equals(type)) throw new IOException("Failed to create codec for type " + type + " (no encoder)");
            Encoder e = new Encoder();
            ENCODERS.add(e);
            return e;
        }
    }

    private static synchronized long tick() {
        clockUs += 33333;
        return clockUs;
    }

    private static final class Output {
        final int kind; // 0 buffer, 1 format changed
        final int flags;
        final long ptsUs;
        final byte[] payload;

        Output(int kind, int flags, long ptsUs, byte[] payload) {
            this.kind = kind;
            this.flags = flags;
            this.ptsUs = ptsUs;
            this.payload = payload;
        }
    }

    /** One MediaCodec encoder instance. */
    public static final class Encoder {
        public final String name = ENCODER_NAME;
        private final List<String> log = new ArrayList<String>();
        private final List<String> formats = new ArrayList<String>();
        private final LinkedBlockingQueue<Output> queue = new LinkedBlockingQueue<Output>();
        private final Map<Integer, ByteBuffer> dequeued = new HashMap<Integer, ByteBuffer>();
        private String state = "uninitialized";
        private MediaFormat format;
        private Surface input;
        private int framesSinceStart;
        private boolean eos;
        private int nextIndex;

        /** What was called, in order ("configure 720x1280", "createInputSurface", "start", ...). */
        public synchronized List<String> log() {
            return new ArrayList<String>(log);
        }

        /** Each configure's format entries (MediaFormat.entries()), in order. */
        public synchronized List<String> formats() {
            return new ArrayList<String>(formats);
        }

        public synchronized String state() {
            return state;
        }

        private void require(String expected, String call) {
            if (!state.equals(expected)) throw new IllegalStateException(call + " in state " + state);
        }

        public synchronized void configure(MediaFormat f, Surface surface, int flags) {
            require("uninitialized", "configure");
            if ((flags & MediaCodec.CONFIGURE_FLAG_ENCODE) == 0) throw new IllegalArgumentException("not configured as an encoder");
            if (surface != null) throw new IllegalArgumentException("an encoder has no output surface");
            int w = f.getInteger(MediaFormat.KEY_WIDTH);
            int h = f.getInteger(MediaFormat.KEY_HEIGHT);
            log.add("configure " + w + "x" + h);
            formats.add(f.entries());
            int a;
            synchronized (FakeMedia.class) {
                a = requiredAlignment;
            }
            if (a > 0 && (w % a != 0 || h % a != 0)) {
                throw new IllegalStateException("configure failed: " + w + "x" + h + " is not a multiple of " + a + " (Error 0x80001001)");
            }
            if (!f.containsKey(MediaFormat.KEY_FRAME_RATE) || !f.containsKey(MediaFormat.KEY_BIT_RATE) || !f.containsKey(MediaFormat.KEY_COLOR_FORMAT)
                    || !f.containsKey(MediaFormat.KEY_I_FRAME_INTERVAL)) {
                throw new IllegalArgumentException("format lacks frame-rate, bitrate, color-format or i-frame-interval");
            }
            format = f;
            state = "configured";
        }

        public synchronized Surface createInputSurface() {
            require("configured", "createInputSurface");
            log.add("createInputSurface");
            input = new Surface(this);
            return input;
        }

        public void start() {
            RuntimeException failure;
            synchronized (FakeMedia.class) {
                failure = startFailure;
            }
            synchronized (this) {
                require("configured", "start");
                log.add("start");
                if (failure != null) throw failure;
                state = "executing";
                framesSinceStart = 0;
                eos = false;
                int w = format.getInteger(MediaFormat.KEY_WIDTH);
                int h = format.getInteger(MediaFormat.KEY_HEIGHT);
                queue.add(new Output(1, 0, 0, null));
                byte[] config = {0, 0, 0, 1, 0x67, 0x42, (byte) 0xc0, 0x1f, (byte) (w >> 8), (byte) w, (byte) (h >> 8), (byte) h,
                    0, 0, 0, 1, 0x68, (byte) 0xce, 0x3c, (byte) 0x80};
                queue.add(new Output(0, MediaCodec.BUFFER_FLAG_CODEC_CONFIG, 0, config));
            }
        }

        /** A picture arrived on the input surface. */
        public synchronized void frame() {
            if (!"executing".equals(state) || eos) return;
            boolean key = framesSinceStart == 0;
            byte[] payload = {0, 0, 0, 1, (byte) (key ? 0x65 : 0x41), (byte) framesSinceStart};
            framesSinceStart++;
            queue.add(new Output(0, key ? MediaCodec.BUFFER_FLAG_KEY_FRAME : 0, tick(), payload));
        }

        synchronized void idle(long ms) {
            boolean ignores;
            synchronized (FakeMedia.class) {
                ignores = ignoresRepeat;
            }
            if (ignores || !"executing".equals(state) || framesSinceStart == 0 || format == null
                    || !format.containsKey(MediaFormat.KEY_REPEAT_PREVIOUS_FRAME_AFTER)) {
                return;
            }
            long after = format.getLong(MediaFormat.KEY_REPEAT_PREVIOUS_FRAME_AFTER);
            if (after <= 0) return;
            for (long n = ms * 1000 / after; n > 0; n--) frame();
        }

        public synchronized void signalEndOfInputStream() {
            require("executing", "signalEndOfInputStream");
            log.add("signalEndOfInputStream");
            if (!eos) queue.add(new Output(0, MediaCodec.BUFFER_FLAG_END_OF_STREAM, 0, new byte[0]));
            eos = true;
        }

        public int dequeueOutputBuffer(MediaCodec.BufferInfo info, long timeoutUs) {
            synchronized (this) {
                require("executing", "dequeueOutputBuffer");
            }
            Output o;
            try {
                o = timeoutUs < 0 ? queue.take() : queue.poll(timeoutUs, TimeUnit.MICROSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return MediaCodec.INFO_TRY_AGAIN_LATER;
            }
            if (o == null) return MediaCodec.INFO_TRY_AGAIN_LATER;
            if (o.kind == 1) return MediaCodec.INFO_OUTPUT_FORMAT_CHANGED;
            synchronized (this) {
                if (!"executing".equals(state)) throw new IllegalStateException("dequeueOutputBuffer in state " + state);
                // The valid bytes sit at an offset inside a larger buffer, as codec buffers do.
                int offset = 3;
                byte[] whole = new byte[offset + o.payload.length + 2];
                whole[0] = (byte) 0xee;
                System.arraycopy(o.payload, 0, whole, offset, o.payload.length);
                ByteBuffer b = ByteBuffer.wrap(whole);
                b.position(offset);
                b.limit(offset + o.payload.length);
                int index = nextIndex++;
                dequeued.put(index, b);
                info.set(offset, o.payload.length, o.ptsUs, o.flags);
                return index;
            }
        }

        public synchronized ByteBuffer getOutputBuffer(int index) {
            ByteBuffer b = dequeued.get(index);
            if (b == null) throw new IllegalStateException("no dequeued output buffer " + index);
            return b;
        }

        public synchronized void releaseOutputBuffer(int index) {
            if (dequeued.remove(index) == null) throw new IllegalStateException("releaseOutputBuffer of buffer " + index + " that is not dequeued");
        }

        public synchronized void stop() {
            log.add("stop");
            if ("released".equals(state)) throw new IllegalStateException("stop after release");
            toUninitialized();
        }

        public synchronized void reset() {
            log.add("reset");
            if ("released".equals(state)) throw new IllegalStateException("reset after release");
            toUninitialized();
        }

        private void toUninitialized() {
            state = "uninitialized";
            queue.clear();
            dequeued.clear();
            if (input != null) input.release();
            input = null;
        }

        public synchronized void release() {
            log.add("release");
            toUninitialized();
            state = "released";
        }

        @Override
        public String toString() {
            return name;
        }
    }
}

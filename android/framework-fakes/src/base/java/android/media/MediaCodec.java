/*
 * Fake of frameworks/base/media/java/android/media/MediaCodec.java @ android-14.0.0_r1, as an H.264
 * surface encoder (the state machine of MediaCodec's documentation: Uninitialized -configure->
 * Configured -start-> Executing -stop/reset-> Uninitialized; release ends it). The encoding itself
 * is dev.devicebridge.fakes.FakeMedia's: configure checks the format as the profile's encoder does,
 * start queues INFO_OUTPUT_FORMAT_CHANGED then the CODEC_CONFIG buffer (SPS/PPS), every picture a
 * mirrored display draws into the input surface becomes a frame (the first after start a key
 * frame), signalEndOfInputStream queues an END_OF_STREAM buffer.
 */
package android.media;

import android.view.Surface;
import dev.devicebridge.fakes.FakeMedia;
import java.io.IOException;
import java.nio.ByteBuffer;

public final class MediaCodec {
    public static final int BUFFER_FLAG_SYNC_FRAME = 1;
    public static final int BUFFER_FLAG_KEY_FRAME = 1;
    public static final int BUFFER_FLAG_CODEC_CONFIG = 2;
    public static final int BUFFER_FLAG_END_OF_STREAM = 4;
    public static final int CONFIGURE_FLAG_ENCODE = 1;
    public static final int INFO_TRY_AGAIN_LATER = -1;
    public static final int INFO_OUTPUT_FORMAT_CHANGED = -2;
    public static final int INFO_OUTPUT_BUFFERS_CHANGED = -3;

    public static final class BufferInfo {
        public int offset;
        public int size;
        public long presentationTimeUs;
        public int flags;

        public void set(int newOffset, int newSize, long newTimeUs, int newFlags) {
            offset = newOffset;
            size = newSize;
            presentationTimeUs = newTimeUs;
            flags = newFlags;
        }
    }

    private final FakeMedia.Encoder encoder;

    private MediaCodec(FakeMedia.Encoder encoder) {
        this.encoder = encoder;
    }

    public static MediaCodec createEncoderByType(String type) throws IOException {
        return new MediaCodec(FakeMedia.create(type));
    }

    public String getName() {
        return encoder.name;
    }

    public void configure(MediaFormat format, Surface surface, MediaCrypto crypto, int flags) {
        encoder.configure(format, surface, flags);
    }

    public Surface createInputSurface() {
        return encoder.createInputSurface();
    }

    public void start() {
        encoder.start();
    }

    public void stop() {
        encoder.stop();
    }

    public void reset() {
        encoder.reset();
    }

    public void release() {
        encoder.release();
    }

    public void signalEndOfInputStream() {
        encoder.signalEndOfInputStream();
    }

    public int dequeueOutputBuffer(BufferInfo info, long timeoutUs) {
        return encoder.dequeueOutputBuffer(info, timeoutUs);
    }

    public ByteBuffer getOutputBuffer(int index) {
        return encoder.getOutputBuffer(index);
    }

    public void releaseOutputBuffer(int index, boolean render) {
        encoder.releaseOutputBuffer(index);
    }
}

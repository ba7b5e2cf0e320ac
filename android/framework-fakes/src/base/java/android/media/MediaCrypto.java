/* Fake of frameworks/base/media/java/android/media/MediaCrypto.java @ android-14.0.0_r1: the type MediaCodec.configure takes (always null here). */
package android.media;

public final class MediaCrypto {
    private MediaCrypto() {}
}

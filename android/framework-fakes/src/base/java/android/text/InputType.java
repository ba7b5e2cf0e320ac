/*
 * Fake of frameworks/base/core/java/android/text/InputType.java @ android-6.0.1_r1 (unchanged
 * since API 3 for these constants): the class mask and the text class/flags the adapters use.
 */
package android.text;

public interface InputType {
    int TYPE_MASK_CLASS = 0x0000000f;
    int TYPE_NULL = 0x00000000;
    int TYPE_CLASS_TEXT = 0x00000001;
    int TYPE_TEXT_FLAG_MULTI_LINE = 0x00020000;
    int TYPE_TEXT_FLAG_NO_SUGGESTIONS = 0x00080000;
}

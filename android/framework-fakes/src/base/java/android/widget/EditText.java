/*
 * Fake of frameworks/base/core/java/android/widget/EditText.java @ android-6.0.1_r1: an editable
 * TextView (getDefaultEditable() is true; see TextView for what that sets up). getText() answers
 * the editable buffer as a CharSequence (the real override returns android.text.Editable, which has
 * no fake).
 */
package android.widget;

import android.content.Context;

public class EditText extends TextView {
    public EditText(Context context) {
        super(context);
    }

    @Override
    protected boolean getDefaultEditable() {
        return true;
    }
}

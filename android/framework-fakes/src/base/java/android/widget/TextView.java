/*
 * Fake of frameworks/base/core/java/android/widget/TextView.java @ android-6.0.1_r1: text, hint and
 * input type, as a TextView built in code (no attributes) keeps them.
 *
 * - Editable (getDefaultEditable(), true for EditText): the view gets an Editor with input type
 *   TYPE_CLASS_TEXT, then the constructor's setInputTypeSingleLine(false) adds
 *   TYPE_TEXT_FLAG_MULTI_LINE (a new EditText answers getInputType() 0x20001), and it is focusable
 *   (it has a key listener). A plain TextView has no Editor: getInputType() is TYPE_NULL and it is
 *   not focusable.
 * - setText(null) is setText(""). An editable buffer is a copy the view owns and edits (here a
 *   StringBuilder standing in for the Editable); append(text) makes the buffer editable and adds to
 *   it, as typing at the end of the field does.
 * - setSingleLine(b) adds/removes TYPE_TEXT_FLAG_MULTI_LINE when the class is TYPE_CLASS_TEXT
 *   (setInputTypeSingleLine); setInputType(type) stores the type as given. Line layout and
 *   transformation methods are not modelled, so the single-line mode itself is not kept.
 * - setHint keeps hint.toString() (TextUtils.stringOrSpannedString; no spans here).
 */
package android.widget;

import android.content.Context;
import android.text.InputType;
import android.view.View;

public class TextView extends View {
    private CharSequence mText = "";
    /** mBufferType == EDITABLE. */
    private boolean mEditableBuffer;
    private CharSequence mHint;
    /** mEditor.mInputType; TYPE_NULL while there is no Editor. */
    private int mInputType = InputType.TYPE_NULL;

    public TextView(Context context) {
        super(context);
        mEditableBuffer = getDefaultEditable();
        if (mEditableBuffer) {
            mInputType = InputType.TYPE_CLASS_TEXT;
            mText = new StringBuilder();
        }
        setFocusable(mEditableBuffer);
        setInputTypeSingleLine(false);
    }

    protected boolean getDefaultEditable() {
        return false;
    }

    public final void setText(CharSequence text) {
        if (text == null) text = "";
        mText = mEditableBuffer ? new StringBuilder(text) : text;
    }

    public CharSequence getText() {
        return mText;
    }

    public final void append(CharSequence text) {
        if (!mEditableBuffer) {
            mEditableBuffer = true;
            mText = new StringBuilder(mText);
        }
        ((StringBuilder) mText).append(text);
    }

    public final void setHint(CharSequence hint) {
        mHint = hint == null ? null : hint.toString();
    }

    public CharSequence getHint() {
        return mHint;
    }

    public void setSingleLine(boolean singleLine) {
        setInputTypeSingleLine(singleLine);
    }

    private void setInputTypeSingleLine(boolean singleLine) {
        if ((mInputType & InputType.TYPE_MASK_CLASS) == InputType.TYPE_CLASS_TEXT) {
            if (singleLine) {
                mInputType &= ~InputType.TYPE_TEXT_FLAG_MULTI_LINE;
            } else {
                mInputType |= InputType.TYPE_TEXT_FLAG_MULTI_LINE;
            }
        }
    }

    public void setInputType(int type) {
        mInputType = type;
    }

    public int getInputType() {
        return mInputType;
    }
}

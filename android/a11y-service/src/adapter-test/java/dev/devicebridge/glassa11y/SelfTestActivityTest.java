package dev.devicebridge.glassa11y;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import android.content.res.Resources;
import android.text.InputType;
import android.view.View;
import android.view.ViewGroup;
import android.widget.EditText;
import android.widget.LinearLayout;
import android.widget.TextView;
import dev.devicebridge.fakes.FakeActivities;
import dev.devicebridge.fakes.FakeDevice;
import org.junit.Before;
import org.junit.Test;

/** The doctor's self-test screen as ActivityThread runs it: launched, sent to the back, brought to the front again. */
public class SelfTestActivityTest {
    private SelfTestActivity activity;

    @Before
    public void launch() {
        FakeDevice.reset();
        activity = FakeActivities.launch(SelfTestActivity.class);
    }

    private LinearLayout screen() {
        View content = FakeActivities.contentView(activity);
        assertTrue("content view " + content, content instanceof LinearLayout);
        return (LinearLayout) content;
    }

    /** The one editable field on the screen. */
    private EditText field() {
        LinearLayout screen = screen();
        EditText field = null;
        for (int i = 0; i < screen.getChildCount(); i++) {
            View child = screen.getChildAt(i);
            if (child instanceof EditText) {
                assertEquals("a second editable field at " + i, null, field);
                field = (EditText) child;
            }
        }
        assertNotNull("no editable field", field);
        return field;
    }

    @Test
    public void showsTheTitleAndOneEmptyFocusedFieldWithTheHintAndNoSuggestions() {
        LinearLayout screen = screen();
        assertEquals(LinearLayout.VERTICAL, screen.getOrientation());
        assertEquals(2, screen.getChildCount());
        View first = screen.getChildAt(0);
        assertTrue("title " + first, first instanceof TextView && !(first instanceof EditText));
        assertEquals(SelfTestActivity.TITLE, ((TextView) first).getText().toString());
        assertEquals(ViewGroup.LayoutParams.MATCH_PARENT, first.getLayoutParams().width);

        EditText field = field();
        assertSame(field, screen.getChildAt(1));
        assertEquals(SelfTestActivity.HINT, String.valueOf(field.getHint()));
        assertEquals("", field.getText().toString());
        assertEquals(ViewGroup.LayoutParams.MATCH_PARENT, field.getLayoutParams().width);
        assertEquals(ViewGroup.LayoutParams.WRAP_CONTENT, field.getLayoutParams().height);
        assertTrue("the field has the focus", field.isFocused());
        assertSame(field, activity.getCurrentFocus());
        assertFalse(first.isFocused());

        int type = field.getInputType();
        assertEquals(InputType.TYPE_CLASS_TEXT, type & InputType.TYPE_MASK_CLASS);
        assertEquals(InputType.TYPE_TEXT_FLAG_NO_SUGGESTIONS, type & InputType.TYPE_TEXT_FLAG_NO_SUGGESTIONS);
        assertEquals("single line", 0, type & InputType.TYPE_TEXT_FLAG_MULTI_LINE);

        // 16dp of padding at the device's density (420 dpi on the fake device).
        int pad = Math.round(16 * Resources.getSystem().getDisplayMetrics().density);
        assertEquals(42, pad);
        assertEquals(pad, screen.getPaddingLeft());
        assertEquals(pad, screen.getPaddingTop());
        assertEquals(pad, screen.getPaddingRight());
        assertEquals(pad, screen.getPaddingBottom());
    }

    @Test
    public void typedTextIsGoneWhenTheScreenComesToTheFrontAgain() {
        EditText field = field();
        field.append("typed by the doctor");
        assertEquals("typed by the doctor", field.getText().toString());

        // Covered (home, another app, screen off): stopped, not destroyed; the text stays meanwhile.
        FakeActivities.moveToBack(activity);
        assertEquals("typed by the doctor", field.getText().toString());

        FakeActivities.bringToFront(activity);
        assertSame("the same screen, not a new one", field, field());
        assertEquals("", field.getText().toString());
        assertEquals(SelfTestActivity.HINT, String.valueOf(field.getHint()));
        assertTrue("the field has the focus", field.isFocused());
        assertSame(field, activity.getCurrentFocus());
    }
}

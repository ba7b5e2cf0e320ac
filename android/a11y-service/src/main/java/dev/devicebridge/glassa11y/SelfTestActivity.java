package dev.devicebridge.glassa11y;

import android.app.Activity;
import android.os.Bundle;
import android.text.InputType;
import android.view.ViewGroup;
import android.widget.EditText;
import android.widget.LinearLayout;
import android.widget.TextView;

/**
 * The doctor's self-test screen: a title and one EditText that has the focus, laid out in code (no
 * resources). The bridge's doctor starts it with {@code am start -n} from the shell, types into the
 * field through the glass agent and reads it back through the glass a11y service, then stops the
 * package. The field is emptied whenever the screen comes to the front, so every run starts clean.
 */
public final class SelfTestActivity extends Activity {
    public static final String TITLE = "Device Bridge self-test";
    public static final String HINT = "Device Bridge self-test field";

    private EditText field;

    @Override
    protected void onCreate(Bundle savedInstanceState) {
        super.onCreate(savedInstanceState);
        int pad = Math.round(16 * getResources().getDisplayMetrics().density);
        LinearLayout layout = new LinearLayout(this);
        layout.setOrientation(LinearLayout.VERTICAL);
        layout.setPadding(pad, pad, pad, pad);

        TextView title = new TextView(this);
        title.setText(TITLE);
        layout.addView(title, new LinearLayout.LayoutParams(
                ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.WRAP_CONTENT));

        field = new EditText(this);
        field.setHint(HINT);
        field.setSingleLine(true);
        // No suggestions: the keyboard must not rewrite what the doctor types.
        field.setInputType(InputType.TYPE_CLASS_TEXT | InputType.TYPE_TEXT_FLAG_NO_SUGGESTIONS);
        layout.addView(field, new LinearLayout.LayoutParams(
                ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.WRAP_CONTENT));

        setContentView(layout);
    }

    @Override
    protected void onStart() {
        super.onStart();
        field.setText("");
        field.requestFocus();
    }
}

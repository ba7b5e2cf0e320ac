/*
 * Fake of frameworks/base/core/java/android/app/Activity.java @ android-6.0.1_r1
 * (ContextThemeWrapper folded in): the life-cycle callbacks, setContentView(View) and
 * getCurrentFocus().
 *
 * - attach(context) (hidden; the real one also takes the thread, token, intent, window, ...) sets
 *   the base context ActivityThread.performLaunchActivity creates, before onCreate; getResources()
 *   goes to it. dev.devicebridge.fakes.FakeActivities launches activities this way.
 * - setContentView(view) makes the view the window's content with MATCH_PARENT x MATCH_PARENT
 *   params (PhoneWindow.setContentView), replacing the previous one.
 * - getCurrentFocus() is the focused view of the content (Window.getCurrentFocus: the decor's
 *   findFocus()), null when nothing in it has the focus.
 *
 * Not modelled: the window itself, the decor, action bar, saved state, finishing, mCalled
 * (SuperNotCalledException).
 */
package android.app;

import android.content.Context;
import android.content.ContextWrapper;
import android.os.Bundle;
import android.view.View;
import android.view.ViewGroup;

public class Activity extends ContextWrapper {
    private View mContentView;

    public Activity() {
        super(null);
    }

    final void attach(Context context) {
        attachBaseContext(context);
    }

    protected void onCreate(Bundle savedInstanceState) {}

    protected void onStart() {}

    protected void onRestart() {}

    protected void onResume() {}

    protected void onPause() {}

    protected void onStop() {}

    public void setContentView(View view) {
        view.setLayoutParams(new ViewGroup.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.MATCH_PARENT));
        mContentView = view;
    }

    public View getCurrentFocus() {
        return mContentView == null ? null : mContentView.findFocus();
    }
}

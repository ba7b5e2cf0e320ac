/* Fake of frameworks/base/core/java/android/view/WindowManager.java @ android-14.0.0_r1: getDefaultDisplay (deprecated at 30, still answers). */
package android.view;

public interface WindowManager {
    Display getDefaultDisplay();

    /** Fake-only: the window manager Context.getSystemService(WINDOW_SERVICE) answers. */
    final class Fake implements WindowManager {
        private static final Display DISPLAY = new Display();

        @Override
        public Display getDefaultDisplay() {
            return DISPLAY;
        }
    }
}

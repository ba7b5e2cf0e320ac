package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertEquals;

import java.util.Arrays;
import org.junit.Test;

public class ViewportTest {
    private static FakeNode node(String pkg, Rect bounds) {
        FakeNode n = new FakeNode("android.widget.FrameLayout", bounds);
        n.packageName = pkg;
        return n;
    }

    @Test
    public void prefersTheActiveOrFocusedApplicationWindow() {
        WindowRoot system = new WindowRoot(node("com.android.systemui", new Rect(0, 0, 1080, 80)),
                new WindowInfo(0, 3, 5, false, false, new Rect(0, 0, 1080, 80)));
        WindowRoot background = new WindowRoot(node("a", new Rect(0, 0, 500, 500)),
                new WindowInfo(1, 1, 1, false, false, new Rect(0, 0, 500, 500)));
        WindowRoot active = new WindowRoot(node("b", new Rect(0, 80, 1080, 2300)),
                new WindowInfo(2, 1, 2, true, false, new Rect(0, 80, 1080, 2300)));
        assertEquals(new Rect(0, 80, 1080, 2300), Viewport.of(Arrays.asList(system, background, active)));
        assertEquals(new Rect(0, 0, 500, 500), Viewport.of(Arrays.asList(system, background)));
    }

    @Test
    public void withoutWindowMetadataSkipsSystemUiAndKeyboards() {
        WindowRoot ime = new WindowRoot(node("com.example.keyboard", new Rect(0, 1500, 1080, 2400)), null);
        WindowRoot app = new WindowRoot(node("com.example", new Rect(0, 0, 1080, 1500)), null);
        WindowRoot empty = new WindowRoot(node("com.example.other", new Rect(5, 5, 5, 5)), null);
        assertEquals(new Rect(0, 0, 1080, 1500), Viewport.of(Arrays.asList(ime, empty, app)));
        assertEquals(new Rect(0, 1500, 1080, 2400), Viewport.of(Arrays.asList(ime)));
        Fields f = Viewport.fields(new Rect(10, 20, 110, 220));
        assertEquals("10", f.get("x"));
        assertEquals("20", f.get("y"));
        assertEquals("100", f.get("width"));
        assertEquals("200", f.get("height"));
    }
}
